import type { Node, NodeAPI, NodeDef } from './types';
import { RouterLayer, normalisePath } from './http-node';
import { CatalogText, catalogText } from '../util/catalog-text';

/** The node whose route a handler serves, kept for naming it when another node asks for the same path. */
const owners = new WeakMap<object, Node>();

/** Records that `handler` is the route of `node`. */
export function ownRoute(handler: object, node: Node): void {
  owners.set(handler, node);
}

interface FlowNodeDef extends NodeDef {
  d?: boolean;
  label?: string;
  url?: string;
  method?: string;
}

/**
 * Who handles a route, for the error that names the clash: a node of this pack (recorded by
 * `ownRoute`) or a core `http in` node with that path and method, with its tab (or subflow). Other
 * routes (added by other modules) are not found: the caller names the route itself.
 */
export function describeRouteOwner(RED: NodeAPI, layer: RouterLayer): { text: CatalogText; label: string } | undefined {
  const own = layer.route?.stack.map((entry) => owners.get(entry.handle as object)).find((node) => node !== undefined);
  const deployed: FlowNodeDef[] = [];
  RED.nodes.eachNode((def) => deployed.push(def));
  const path = typeof layer.route?.path === 'string' ? normalisePath(layer.route.path) : undefined;
  const core = deployed.find(
    (def) =>
      def.type === 'http in' &&
      def.d !== true &&
      path !== undefined &&
      normalisePath(def.url?.startsWith('/') ? def.url : `/${def.url ?? ''}`) === path &&
      !!layer.route?.methods[def.method ?? ''],
  );
  const found = own ? { id: own.id, name: own.name, type: own.type, z: own.z } : core;
  if (!found) return undefined;
  const label = found.name || found.id;
  const tab = deployed.find((def) => def.id === found.z);
  const tabLabel = tab ? String(tab.label || tab.name || tab.id) : undefined;
  return {
    label,
    text: tabLabel
      ? catalogText('error.webhook.ownerOnTab', { name: label, type: found.type, tab: tabLabel })
      : catalogText('error.webhook.owner', { name: label, type: found.type }),
  };
}
