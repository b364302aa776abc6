import { inputText } from './values';

/**
 * The validators the nodes' defaults name (nodes/lib/node-red/editor-definition.ts's Validator), as
 * Node-RED calls them: `this` is the node; with `opt`, a text says what is wrong beside the field.
 */

const MEMBER_PATH = /^([A-Za-z_$][\w$-]*(\.[\w$-]+)*)?$/;
const WHOLE_NUMBER = /^[1-9][0-9]*$/;
const CONFIG_TEXT = '@svc/node-red-location/svc-config:svc-config.validation.';
const WEBHOOK_TEXT = '@svc/node-red-location/svc-webhook-in:svc-webhook-in.validation.';

/** A positive number, as the runtime's setting parser reads one. */
function positive(v: unknown): boolean {
  const n = Number(v);
  return n > 0 && isFinite(n);
}

function text(value: unknown): string {
  return inputText(value).trim();
}

/**
 * An address the runtime accepts: http:// or https:// and a host (`api.example.com` alone is
 * refused) and a path, without a query, a fragment or user info; or ${NAME}, which Node-RED
 * replaces from the environment when the flow starts.
 */
function httpUrl(required: boolean): SvcValidator {
  return function (value, opt) {
    const address = text(value);
    let problem: string | undefined;
    if (address === '') problem = required ? 'urlRequired' : undefined;
    else if (!/^(https?:\/\/[^\s/?#]+([/?#]\S*)?|\$\{\w+\})$/i.test(address)) problem = 'httpUrl';
    else if (/[?#]|^[a-z]+:\/\/[^/]*@/i.test(address)) problem = 'plainUrl';
    if (!problem) return true;
    return opt ? RED._(CONFIG_TEXT + problem) : false;
  };
}

/** A path compared as express routes it: case, a trailing slash and doubled slashes aside. */
function routed(path: string): string {
  return `/${path}`
    .replace(/\/{2,}/g, '/')
    .replace(/(.)\/$/, '$1')
    .toLowerCase();
}

/**
 * svc-webhook-in's path: one fixed path the runtime serves (no route syntax: a pattern would take
 * requests meant for other routes), and not the path of another enabled svc-webhook-in. The runtime
 * refuses the later of two at deploy; here the clash is marked before, naming the other node and its tab.
 */
function webhookPath(this: EditorNode, value: unknown, opt?: unknown): boolean | string {
  const path = text(value);
  if (!/^\/?[^\s?#]+$/.test(path)) return opt ? RED._(`${WEBHOOK_TEXT}path`) : false;
  if (/[:*?+()[\]{}|^$\\!]/.test(path)) return opt ? RED._(`${WEBHOOK_TEXT}pattern`) : false;
  const clashes: EditorNode[] = [];
  RED.nodes.eachNode((other) => {
    if (clashes.length || other.id === this.id || other.type !== 'svc-webhook-in' || other.d) return;
    if (routed(text(other.url)) === routed(path)) clashes.push(other);
  });
  const clash = clashes[0];
  if (!clash) return true;
  if (!opt) return false;
  const tab = RED.nodes.workspace(clash.z) || RED.nodes.subflow(clash.z);
  return RED._(`${WEBHOOK_TEXT}pathInUse`, {
    name: RED.utils.getNodeLabel(clash, clash.id),
    tab: tab ? tab.label || tab.name || tab.id : clash.z,
  });
}

export const validate = {
  positive,
  /** Empty (the runtime's default) or positive: settings added after nodes were saved without them. */
  positiveOrEmpty: (v: unknown) => v === undefined || v === '' || positive(v),
  wholeNumber: (v: unknown) => WHOLE_NUMBER.test(inputText(v)),
  /** A dotted member path such as `data.jobId`, or empty. */
  memberPath: (v: unknown) => MEMBER_PATH.test(inputText(v)),
  /**
   * pollIntervalSec: a node from a flow written by 1.0.0 may have only the legacy pollInterval
   * until its dialog is saved (the runtime migrates it when the node starts).
   */
  pollInterval(this: EditorNode, v: unknown): boolean {
    const empty = v === undefined || v === null || v === '';
    return positive(empty ? this.pollInterval : v);
  },
  /**
   * A TypedInput's value checked with `test` only while its type (from the dialog, else the node)
   * is one of `types`: a value read at run time is checked there.
   */
  typedAs(typeProperty: string, types: string[], test: (value: unknown) => boolean): SvcValidator {
    return function (v) {
      const type = $(`#node-input-${typeProperty}`).val() || this[typeProperty];
      return !types.includes(inputText(type)) || test(v);
    };
  },
  webhookPath,
  /**
   * svc-config's base URL: required on the platform 'account', anything on the built-in sandbox
   * (which ignores it). The Platform choice of the open dialog, else the node's.
   */
  accountUrl(this: EditorNode, value: unknown, opt?: unknown): boolean | string {
    const platform = $('#node-config-input-platform').val() || this.platform;
    return platform === 'sandbox' || httpUrl(true).call(this, value, opt);
  },
  httpUrl,
};
