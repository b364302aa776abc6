import path from 'node:path';
import should from 'should';
import { editorBundle, editorHtml } from '../../build/editor-html';
import { REPO_ROOT } from '../support/paths';
import { Editor, eventually } from './editor';
import { FALLBACK } from './fixtures/svc-fallback/editor';
import { BrowserSession, CONFIG_TYPE, EditorServer, NODE_TYPES, packProblems, TARGETS, usePackedModule } from './environment';
import type { EditorNode, RedApi } from './page-types';

/**
 * `npm run test:browser`: each node definition the build bundles into the pack's .html, called in
 * Node-RED's editor as the editor calls it (label, paletteLabel, labelStyle, port labels, every
 * validator, oneditprepare and oneditsave), with no error in the page's console; and the bundle's
 * closures at work (a label returning a module constant, test/browser/fixtures/svc-fallback).
 */

/** The functions of a definition the editor calls, as far as this suite calls them. */
interface CallableDefinition {
  defaults: Record<string, { value?: unknown; validate?: (this: EditorNode, value: unknown, opt?: object) => unknown }>;
  outputs?: number;
  inputs?: number;
  label?: string | ((this: EditorNode) => unknown);
  paletteLabel?: string | ((this: unknown) => unknown);
  labelStyle?: string | ((this: EditorNode) => unknown);
  inputLabels?: string | ((this: EditorNode, index: number) => unknown);
  outputLabels?: string | ((this: EditorNode, index: number) => unknown);
}

/** What the suite uses of Node-RED's editor beyond page-types' RedApi. */
interface EditorApi extends Pick<RedApi, 'view' | 'workspaces'> {
  nodes: { getType(type: string): CallableDefinition | null; node(id: string): EditorNode | null; id(): string };
  editor: { edit(node: EditorNode): void; editConfig(name: string, type: string, id: string): void };
}

const FIXTURE_TYPE = 'svc-fallback';

/** The page's RED while the fixture's script runs: its registerType set aside, the definitions it was given kept. */
interface FixturePage {
  nodes: {
    registerType: (type: string, definition: CallableDefinition) => void;
    realRegisterType?: (type: string, definition: CallableDefinition) => void;
  };
  registered?: Record<string, CallableDefinition>;
}

describe('node definitions called in the editor (Chromium)', function () {
  const packed = usePackedModule();

  for (const target of TARGETS) {
    describe(target.runtime.title, function () {
      let server: EditorServer | undefined;
      let session: BrowserSession | undefined;
      let editor: Editor | undefined;
      const open = (): Editor => {
        if (!editor) throw new Error('the editor is not open');
        return editor;
      };

      before(async function () {
        this.timeout(300_000);
        server = await EditorServer.start(target, packed());
        session = await BrowserSession.launch('en-US');
        editor = new Editor(session.page, server.url);
        await editor.open();
      });

      after(async function () {
        this.timeout(30_000);
        await session?.close();
        await server?.stop();
      });

      for (const type of NODE_TYPES) {
        it(`${type}: label, paletteLabel, labelStyle, port labels, every validator, oneditprepare and oneditsave run without an error`, async function () {
          const page = open().page;
          const consoleBefore = session?.console.length ?? 0;
          // A node with its defaults' values, imported as the Import menu does (a config node is global).
          const id = await page.evaluate(
            ({ nodeType, config }) => {
              const { RED } = globalThis as unknown as { RED: EditorApi };
              const definition = RED.nodes.getType(nodeType);
              if (!definition) throw new Error(`${nodeType} is not registered`);
              const node: Record<string, unknown> = { id: RED.nodes.id(), type: nodeType };
              for (const [name, property] of Object.entries(definition.defaults)) node[name] = property.value;
              if (!config) Object.assign(node, { z: RED.workspaces.active(), x: 200, y: 100, wires: [[]] });
              RED.view.importNodes([node], { generateIds: false });
              return node.id as string;
            },
            { nodeType: type, config: type === CONFIG_TYPE },
          );
          const failures = await page.evaluate((nodeId) => {
            const { RED } = globalThis as unknown as { RED: EditorApi };
            const node = RED.nodes.node(nodeId);
            if (!node) return [`node ${nodeId} was not imported`];
            const definition = node._def as unknown as CallableDefinition;
            const errors: string[] = [];
            const call = (what: string, run: () => unknown, expected: 'string' | 'boolean-or-string') => {
              try {
                const result = run();
                const ok = expected === 'string' ? typeof result === 'string' : typeof result === 'boolean' || typeof result === 'string';
                if (!ok) errors.push(`${what} returned ${typeof result}`);
              } catch (err) {
                errors.push(`${what} threw ${String(err)}`);
              }
            };
            if (typeof definition.label === 'function') call('label', () => (definition.label as (this: EditorNode) => unknown).call(node), 'string');
            if (typeof definition.paletteLabel === 'function')
              call('paletteLabel', () => (definition.paletteLabel as (this: unknown) => unknown).call(definition), 'string');
            if (typeof definition.labelStyle === 'function')
              call('labelStyle', () => (definition.labelStyle as (this: EditorNode) => unknown).call(node), 'string');
            const ports = {
              inputLabels: definition.inputs ?? 0,
              outputLabels: Number((node as unknown as { outputs?: number }).outputs ?? definition.outputs ?? 0),
            };
            for (const [member, count] of Object.entries(ports)) {
              const labels = definition[member as keyof typeof ports];
              if (typeof labels !== 'function') continue;
              for (let index = 0; index < Math.max(count, 2); index++) call(`${member}(${index})`, () => labels.call(node, index), 'string');
            }
            for (const [name, property] of Object.entries(definition.defaults)) {
              const validate = property.validate;
              if (!validate) continue;
              const value = (node as unknown as Record<string, unknown>)[name];
              call(`defaults.${name}.validate`, () => validate.call(node, value, {}), 'boolean-or-string');
            }
            return errors;
          }, id);
          should(failures).be.empty();

          // oneditprepare runs when the dialog opens, oneditsave on Done.
          const config = type === CONFIG_TYPE;
          await page.evaluate(
            ({ nodeId, nodeType, isConfig }) => {
              const { RED } = globalThis as unknown as { RED: EditorApi };
              const node = RED.nodes.node(nodeId);
              if (!node) throw new Error(`node ${nodeId} is gone`);
              if (isConfig) RED.editor.editConfig('', nodeType, nodeId);
              else RED.editor.edit(node);
            },
            { nodeId: id, nodeType: type, isConfig: config },
          );
          const prefix = config ? '#node-config-dialog' : '#node-dialog';
          const form = config ? '#node-config-dialog-edit-form' : '#dialog-form';
          await page.locator(`${prefix}-ok`).waitFor({ state: 'visible' });
          await page.locator(`${form} .form-row`).first().waitFor({ state: 'visible' });
          if (config) await open().closeConfigDialog('ok');
          else await open().closeNodeDialog('ok');
          should(await eventually(async () => (await page.locator(form).count()) === 0)).be.true();
          await open().removeNodes([id]);
          should(packProblems(session?.console.slice(consoleBefore) ?? [])).be.empty();
        });
      }

      it('a label returning a module constant of its editor.ts (the FALLBACK experiment) shows that constant', async function () {
        const page = open().page;
        const consoleBefore = session?.console.length ?? 0;
        const html = editorHtml(FIXTURE_TYPE, await editorBundle(path.join(REPO_ROOT, 'test', 'browser', 'fixtures', FIXTURE_TYPE)));
        const scripts = [...html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)].map((match) => match[1]);
        should(scripts).have.length(1);
        // Node-RED registers only the types its server lists: the fixture's definition is taken as registerType receives it.
        await page.evaluate(() => {
          const { RED } = globalThis as unknown as { RED: FixturePage };
          RED.registered = {};
          RED.nodes.realRegisterType = RED.nodes.registerType;
          RED.nodes.registerType = (nodeType, definition) => {
            (RED.registered as Record<string, CallableDefinition>)[nodeType] = definition;
          };
        });
        await page.addScriptTag({ content: scripts[0] });
        const labels = await page.evaluate((nodeType) => {
          const { RED } = globalThis as unknown as { RED: FixturePage };
          if (RED.nodes.realRegisterType) RED.nodes.registerType = RED.nodes.realRegisterType;
          const label = RED.registered?.[nodeType]?.label;
          if (typeof label !== 'function') throw new Error(`${nodeType} has no label function`);
          return [label.call({ name: '' } as unknown as EditorNode), label.call({ name: 'named' } as unknown as EditorNode)];
        }, FIXTURE_TYPE);
        should(labels).deepEqual([FALLBACK, 'named']);
        should(session?.console.slice(consoleBefore).filter((entry) => entry.kind === 'pageerror') ?? []).be.empty();
      });
    });
  }
});
