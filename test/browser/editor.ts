import fs from 'node:fs';
import path from 'node:path';
import { Locator, Page } from 'playwright-core';
import { ARTIFACTS_DIR, PACKAGE, PALETTE_TYPES } from './environment';
import type { EditorNode, EditorWindow, PageElement } from './page-types';

/**
 * The Node-RED editor as a user drives it (palette, canvas, edit dialogs, help sidebar, Import menu,
 * Deploy), for Node-RED 4.1 and 5. Every wait is bounded: Playwright's own timeouts (set per session)
 * or the explicit limits below.
 */

/** How long the editor may take to load (palette, flows). */
const LOAD_TIMEOUT_MS = 30_000;
/** How long a deploy, or a "Test connection" round trip, may take. */
const SERVER_TIMEOUT_MS = 20_000;
/** How long a dialog may take to show what it validates (Node-RED revalidates after a short delay). */
const SETTLE_TIMEOUT_MS = 3_000;

/** A message id shown instead of its text, e.g. `svc-isoline.label.origins` (namespace.group.key). */
const RAW_ID = /svc-[a-z]+(?:-[a-z]+)*(?:\.[A-Za-z0-9_]+){2,}/g;

/** What an edit dialog shows of a node's definition. */
export interface DialogReport {
  /** Properties and credentials with no input in the dialog. */
  missing: string[];
  /** Properties with a `<name>Type` companion whose input is not a TypedInput. */
  notTyped: string[];
  /** Config-node properties without Node-RED's selector (a select plus edit and add buttons). */
  noSelector: string[];
  /** Password credentials whose input is not a password input. */
  notPassword: string[];
  typedInputs: string[];
  selectors: string[];
}

export interface HelpReport {
  title: string;
  headings: string[];
  text: string;
}

export interface DeployResult {
  /** Nodes Node-RED considered invalid when Deploy was pressed (it then asks to confirm). */
  invalid: Array<{ id: string; type: string; name: string }>;
}

/** Polls `probe` until it returns true, for at most `timeoutMs`; false if it never did. */
async function eventually(probe: () => Promise<boolean>, timeoutMs = SETTLE_TIMEOUT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Node-RED takes two clicks on a node within 650 ms for a double click, which opens its edit dialog. */
const DOUBLE_CLICK_MS = 650;
/** A tab strip takes two clicks within 400 ms for a double click. */
const TAB_DOUBLE_CLICK_MS = 400;

export class Editor {
  /** When a node on the canvas was last clicked. */
  private lastNodeClick = 0;
  /** When a dialog tab was last clicked. */
  private lastTabClick = 0;

  constructor(
    readonly page: Page,
    readonly url: string,
  ) {}

  /**
   * Clicks (or double-clicks) a node's body, first waiting until the click cannot be taken together
   * with the previous one for a double click (which would open the node's edit dialog).
   */
  private async clickNode(id: string, double: boolean): Promise<void> {
    const wait = this.lastNodeClick + DOUBLE_CLICK_MS + 50 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const body = this.nodeBody(id);
    await (double ? body.dblclick() : body.click());
    this.lastNodeClick = Date.now();
  }

  /** Opens the editor and waits until the palette holds the pack and the flows are loaded. */
  async open(): Promise<void> {
    await this.page.goto(this.url);
    await this.page.locator('#red-ui-header-button-deploy').waitFor({ state: 'visible', timeout: LOAD_TIMEOUT_MS });
    await this.paletteNode(PALETTE_TYPES[0]).waitFor({ state: 'attached', timeout: LOAD_TIMEOUT_MS });
    await this.page.waitForFunction(
      () => {
        const { RED } = globalThis as unknown as EditorWindow;
        return RED.nodes.version() !== null && RED.workspaces.active() !== '';
      },
      undefined,
      { timeout: LOAD_TIMEOUT_MS },
    );
  }

  /** A localised string of the editor itself (Node-RED's own catalog). */
  text(key: string): Promise<string> {
    return this.page.evaluate((id) => (globalThis as unknown as EditorWindow).RED._(id), key);
  }

  paletteCategory(name: string): Locator {
    return this.page.locator(`#red-ui-palette-container-${name}`);
  }

  paletteNode(type: string): Locator {
    return this.page.locator(`.red-ui-palette-node[data-palette-type="${type}"]`);
  }

  canvasNode(id: string): Locator {
    return this.page.locator(`#red-ui-workspace-chart g.red-ui-flow-node-group[id="${id}"]`);
  }

  /** The drawn body of a node on the canvas, the rectangle a click lands on. */
  nodeBody(id: string): Locator {
    return this.canvasNode(id).locator('rect.red-ui-flow-node');
  }

  /** The output ports drawn for a node on the canvas. */
  outputPorts(id: string): Locator {
    return this.canvasNode(id).locator('.red-ui-flow-port-output');
  }

  /** One member of a node as the editor holds it (`RED.nodes.node(id)[name]`); undefined for a node or member it does not have. */
  nodeMember(id: string, name: string): Promise<unknown> {
    return this.page.evaluate(
      ({ nodeId, member }) => ((globalThis as unknown as EditorWindow).RED.nodes.node(nodeId) as unknown as Record<string, unknown> | null)?.[member],
      { nodeId: id, member: name },
    );
  }

  nodeIds(filter: { type?: string; z?: string }): Promise<string[]> {
    return this.page.evaluate((f) => (globalThis as unknown as EditorWindow).RED.nodes.filterNodes(f).map((n) => n.id), filter);
  }

  /** Drags a node from the palette onto the canvas; returns its id. */
  async addNode(type: string): Promise<string> {
    const before = new Set(await this.nodeIds({ type }));
    await this.paletteNode(type).dragTo(this.page.locator('#red-ui-workspace-chart'), { targetPosition: { x: 240, y: 140 } });
    let added: string | undefined;
    await eventually(async () => {
      added = (await this.nodeIds({ type })).find((id) => !before.has(id));
      return added !== undefined;
    });
    if (!added) throw new Error(`dragging ${type} from the palette added no node`);
    // The node is in the flow before the canvas draws it (on a later redraw): wait for its body and output ports.
    const id = added;
    const outputs = Number((await this.nodeMember(id, 'outputs')) ?? 0);
    const drawn = await eventually(async () => (await this.nodeBody(id).count()) === 1 && (await this.outputPorts(id).count()) === outputs);
    if (!drawn) throw new Error(`${type} was added to the flow but not drawn on the canvas with its ${outputs} output(s)`);
    return id;
  }

  /** Shows the tab of the open dialog that holds `selector` (the svc-config dialog has tabs, as core's MQTT broker dialog), if it is on one. */
  async showTabOf(selector: string): Promise<void> {
    const panel = await this.page.evaluate((target) => {
      const { document } = globalThis as unknown as EditorWindow;
      return document.querySelector(target)?.closest('[id$="-tabs-content"] > div')?.id ?? '';
    }, selector);
    if (panel !== '') await this.showTab(panel);
  }

  /**
   * Shows the dialog tab whose panel has id `panel`, clicking its label unless it shows already.
   * Node-RED takes a second click on the same tab strip within 400 ms as a double click, which does
   * not switch tabs: clicks are spaced.
   */
  async showTab(panel: string): Promise<void> {
    if (await this.page.locator(`#${panel}`).isVisible()) return;
    const wait = this.lastTabClick + TAB_DOUBLE_CLICK_MS + 50 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await this.page.click(`#red-ui-tab-${panel} a.red-ui-tab-label`);
    this.lastTabClick = Date.now();
    await this.page.locator(`#${panel}`).waitFor({ state: 'visible' });
  }

  /**
   * Double-clicks a node on the canvas; resolves once its edit dialog is open. On a loaded machine the
   * browser can take the double click for two clicks, which only select the node: it double-clicks
   * again (at most three times).
   */
  async openNodeDialog(id: string): Promise<void> {
    const ok = this.page.locator('#node-dialog-ok');
    for (let attempt = 1; ; attempt++) {
      await this.clickNode(id, true);
      if (await eventually(() => ok.isVisible())) break;
      if (attempt === 3) throw new Error(`double-clicking node ${id} did not open its edit dialog`);
    }
    await this.page.locator('#dialog-form .form-row').first().waitFor({ state: 'visible' });
    await this.trayAtRest('#node-dialog-ok');
  }

  /**
   * Waits until the tray has stopped sliding in (its button in the same place on two reads 50 ms
   * apart): a checkbox clicked while it moves can miss (Playwright then reports no change of state),
   * and a value typed then can be undone by the dialog's own setup finishing after it.
   */
  private async trayAtRest(button: string): Promise<void> {
    let last = '';
    await eventually(async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const box = JSON.stringify(await this.page.locator(button).boundingBox());
      const atRest = box === last;
      last = box;
      return atRest;
    });
  }

  /** Closes the node's edit dialog with Done or Cancel. */
  async closeNodeDialog(button: 'ok' | 'cancel'): Promise<void> {
    await this.closeTray(`#node-dialog-${button}`, '#dialog-form');
  }

  /** In an open node dialog, opens the config node's dialog with the selector's add (+) or edit (pencil) button. */
  async openConfigDialog(property: string, button: 'add' | 'edit'): Promise<void> {
    await this.page.click(`#node-input-btn-${property}-${button}`);
    await this.page.locator('#node-config-dialog-ok').waitFor({ state: 'visible' });
    await this.page.locator('#node-config-dialog-edit-form .form-row').first().waitFor({ state: 'visible' });
    await this.trayAtRest('#node-config-dialog-ok');
  }

  async closeConfigDialog(button: 'ok' | 'cancel'): Promise<void> {
    await this.closeTray(`#node-config-dialog-${button}`, '#node-config-dialog-edit-form');
  }

  /**
   * Clicks a dialog's button until its form is gone (at most three times): a click that lands while
   * the tray is still sliding in is occasionally ignored by the editor.
   */
  private async closeTray(button: string, form: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await this.page.click(button);
      if (await eventually(async () => (await this.page.locator(form).count()) === 0)) return;
      if (attempt === 3) throw new Error(`${button} did not close the dialog`);
    }
  }

  /** Closes whatever a failed test left open (Import dialog, config and node dialogs), so the next test starts clean. */
  async closeDialogs(): Promise<void> {
    for (const button of ['#red-ui-clipboard-dialog-cancel', '#node-config-dialog-cancel', '#node-dialog-cancel']) {
      const cancel = this.page.locator(button);
      if (await cancel.isVisible()) await cancel.click({ timeout: 5_000 }).catch(() => undefined);
    }
  }

  /** Selects a node on the canvas and deletes it with the Delete key. */
  async deleteNode(id: string): Promise<void> {
    await this.clickNode(id, false);
    await this.page.keyboard.press('Delete');
    if (!(await eventually(async () => !(await this.nodeIds({})).includes(id)))) throw new Error(`node ${id} was not deleted`);
  }

  /** Removes nodes through the editor's API (as Delete does), for cleaning up nodes a click may not reach. */
  async removeNodes(ids: string[]): Promise<void> {
    await this.page.evaluate((nodeIds) => {
      const { RED } = globalThis as unknown as EditorWindow;
      for (const id of nodeIds) RED.nodes.remove(id);
      RED.nodes.dirty(true);
      RED.view.redraw(true);
    }, ids);
  }

  /** Moves a node on the canvas (to a free spot, so that a click reaches it). */
  async moveNode(id: string, x: number, y: number): Promise<void> {
    await this.page.evaluate(
      ({ nodeId, to }) => {
        const { RED } = globalThis as unknown as EditorWindow;
        const node = RED.nodes.node(nodeId) as unknown as { x: number; y: number; dirty: boolean };
        node.x = to.x;
        node.y = to.y;
        node.dirty = true;
        RED.view.redraw(true);
      },
      { nodeId: id, to: { x, y } },
    );
  }

  /**
   * Compares an open dialog with the node type's definition: an input per property and credential,
   * a TypedInput where the definition has a `<name>Type` property, Node-RED's config-node selector
   * for config-node properties, a password input for each password credential.
   */
  dialogReport(type: string, prefix: 'node-input' | 'node-config-input'): Promise<DialogReport> {
    return this.page.evaluate(
      ({ nodeType, idPrefix }) => {
        const { RED, document } = globalThis as unknown as EditorWindow;
        const def = RED.nodes.getType(nodeType);
        const report = {
          missing: [] as string[],
          notTyped: [] as string[],
          noSelector: [] as string[],
          notPassword: [] as string[],
          typedInputs: [] as string[],
          selectors: [] as string[],
        };
        if (!def) return { ...report, missing: [`(type ${nodeType} is not registered)`] };
        const input = (name: string) => document.getElementById(`${idPrefix}-${name}`);
        for (const [name, property] of Object.entries(def.defaults)) {
          const element = input(name);
          if (!element) {
            report.missing.push(name);
            continue;
          }
          if (`${name}Type` in def.defaults) {
            if (element.classList.contains('red-ui-typedInput')) report.typedInputs.push(name);
            else report.notTyped.push(name);
          }
          if (property.type && RED.nodes.getType(property.type)?.category === 'config') {
            const selector = element.tagName === 'SELECT' && !!input(`btn-${name}-edit`) && !!input(`btn-${name}-add`);
            if (selector) report.selectors.push(name);
            else report.noSelector.push(name);
          }
        }
        for (const [name, credential] of Object.entries(def.credentials ?? {})) {
          const element = input(name);
          if (!element) report.missing.push(`credentials.${name}`);
          else if (credential.type === 'password' && element.type !== 'password') report.notPassword.push(name);
        }
        return report;
      },
      { nodeType: type, idPrefix: prefix },
    );
  }

  /**
   * The TypedInputs of the open node dialog, each with the source and value it shows and those the
   * definition's defaults give it (`<name>Type` and `<name>`).
   */
  typedInputs(type: string): Promise<Array<{ name: string; shown: string; expected: string }>> {
    return this.page.evaluate((nodeType) => {
      const { RED, $ } = globalThis as unknown as EditorWindow;
      const defaults = RED.nodes.getType(nodeType)?.defaults ?? {};
      return Object.keys(defaults)
        .filter((name) => `${name}Type` in defaults)
        .map((name) => {
          const input = $(`#node-input-${name}`);
          return {
            name,
            shown: `${input.typedInput('type')}:${input.typedInput('value')}`,
            expected: `${String(defaults[`${name}Type`].value)}:${String(defaults[name].value)}`,
          };
        });
    }, type);
  }

  /**
   * Sets a TypedInput of the open node dialog to a type and value, as a user does, and says whether the
   * dialog then shows it as `invalid` (Node-RED's input-error on the widget) or not, once it settled.
   */
  async typedInputShows(name: string, type: string, value: string, invalid: boolean): Promise<boolean> {
    await this.page.evaluate(
      ({ property, source, text }) => {
        const { $ } = globalThis as unknown as EditorWindow;
        $(`#node-input-${property}`).typedInput('type', source).typedInput('value', text).trigger('change');
      },
      { property: name, source: type, text: value },
    );
    const widget = this.page.locator(`#node-input-${name} + .red-ui-typedInput-container`);
    return eventually(async () => ((await widget.getAttribute('class'))?.split(/\s+/).includes('input-error') ?? false) === invalid);
  }

  /**
   * Makes each visible plain input of the dialog invalid (empty where the property is required,
   * `#bad value#` where it has a validator, `_ADD_` — no config node — for config-node selectors) and
   * returns the properties the dialog did not mark with Node-RED's `input-error`, and those it tried.
   */
  async markInvalidInputs(type: string, prefix: 'node-input' | 'node-config-input'): Promise<{ tried: string[]; unmarked: string[] }> {
    const candidates = await this.page.evaluate(
      ({ nodeType, idPrefix }) => {
        const { RED, document } = globalThis as unknown as EditorWindow;
        const def = RED.nodes.getType(nodeType);
        const found: Array<{ name: string; kind: 'selector' | 'required' | 'validated' }> = [];
        for (const [name, property] of Object.entries(def?.defaults ?? {})) {
          const element = document.getElementById(`${idPrefix}-${name}`);
          if (!element || element.getClientRects().length === 0) continue;
          if (element.tagName === 'SELECT' && property.type && property.required) {
            found.push({ name, kind: 'selector' });
          } else if (element.tagName === 'INPUT' && element.type !== 'checkbox' && !element.classList.contains('red-ui-typedInput')) {
            if (property.required) found.push({ name, kind: 'required' });
            // A number input takes no text, so its only invalid value is an empty one.
            else if (property.validate && element.type !== 'number') found.push({ name, kind: 'validated' });
          }
        }
        return found;
      },
      { nodeType: type, idPrefix: prefix },
    );
    const tried: string[] = [];
    const unmarked: string[] = [];
    for (const candidate of candidates) {
      const input = this.page.locator(`#${prefix}-${candidate.name}`);
      if (candidate.kind === 'selector') {
        await input.selectOption('_ADD_');
      } else {
        await input.fill(candidate.kind === 'required' ? '' : '#bad value#');
      }
      await input.dispatchEvent('change');
      tried.push(candidate.name);
      if (!(await eventually(async () => (await input.getAttribute('class'))?.split(/\s+/).includes('input-error') ?? false))) {
        unmarked.push(candidate.name);
      }
    }
    return { tried, unmarked };
  }

  /** Whether the node on the canvas shows Node-RED's invalid marker (the red triangle). */
  async showsInvalidMarker(id: string): Promise<boolean> {
    const marker = this.canvasNode(id).locator('g.red-ui-flow-node-error');
    return eventually(async () => (await marker.count()) === 1 && !(await marker.getAttribute('class'))?.includes('hide'));
  }

  /** Message ids shown raw (not translated) in the given parts of the page: text, placeholders, titles. */
  rawIds(selectors: string[]): Promise<string[]> {
    return this.page.evaluate(
      ({ roots, pattern }) => {
        const { document } = globalThis as unknown as EditorWindow;
        const shown: string[] = [];
        const collect = (element: PageElement) => {
          for (const attribute of ['placeholder', 'title', 'aria-label']) shown.push(element.getAttribute(attribute) ?? '');
          if (element.tagName === 'INPUT' && element.type === 'button') shown.push(element.value ?? '');
        };
        for (const selector of roots) {
          for (const root of Array.from(document.querySelectorAll(selector))) {
            collect(root);
            for (const child of Array.from(root.childNodes)) if (child.nodeType === 3) shown.push(child.textContent ?? '');
            for (const element of Array.from(root.querySelectorAll('*'))) {
              if (element.closest('script, style, template')) continue;
              collect(element);
              for (const child of Array.from(element.childNodes)) if (child.nodeType === 3) shown.push(child.textContent ?? '');
            }
          }
        }
        return [...new Set(shown.join('\n').match(new RegExp(pattern, 'g')) ?? [])];
      },
      { roots: selectors, pattern: RAW_ID.source },
    );
  }

  /** The visible text of an element. */
  async visibleText(selector: string): Promise<string> {
    return (await this.page.locator(selector).innerText()).trim();
  }

  /** Opens the help sidebar (Ctrl+G H) and shows the help of the entry labelled `label` under the pack's module. */
  async showHelp(label: string): Promise<HelpReport> {
    await this.page.evaluate(() => (globalThis as unknown as EditorWindow).RED.actions.invoke('core:show-help-tab'));
    const toc = this.page.locator('.red-ui-sidebar-help-toc');
    const moduleLabel = toc.locator('.red-ui-treeList-label', { hasText: PACKAGE.name }).first();
    await moduleLabel.waitFor({ state: 'visible' });
    const moduleItem = moduleLabel.locator('xpath=..');
    if (!(await moduleItem.getAttribute('class'))?.includes('expanded')) await moduleLabel.click();
    await moduleItem.locator(':scope > .red-ui-editableList .red-ui-treeList-label', { has: this.page.getByText(label, { exact: true }) }).click();
    const title = this.page.locator('.red-ui-help-title');
    if (!(await eventually(async () => (await title.count()) > 0 && (await title.innerText()).trim() === label))) {
      throw new Error(`the help sidebar did not show ${label}`);
    }
    const help = this.page.locator('.red-ui-sidebar-help-stack .red-ui-help').first();
    return {
      title: (await title.innerText()).trim(),
      headings: (await help.locator('h3').allInnerTexts()).map((h) => h.trim()),
      text: await help.innerText(),
    };
  }

  /** The names the Import > Examples dialog lists under the pack; leaves the dialog closed. */
  async listedExamples(): Promise<string[]> {
    const folder = await this.openImportExamples();
    const names = await folder.locator('.red-ui-treeList-label-text').allInnerTexts();
    await this.page.click('#red-ui-clipboard-dialog-cancel');
    return names.map((name) => name.trim());
  }

  /** Menu > Import > Examples, with the pack's folder open; returns the folder's list of entries. */
  private async openImportExamples(): Promise<Locator> {
    await this.page.click('#red-ui-header-button-sidemenu');
    await this.page.click('#menu-item-import');
    await this.page.click('#red-ui-tab-red-ui-clipboard-dialog-import-tab-examples a');
    const tree = this.page.locator('#red-ui-clipboard-dialog-import-tab-examples');
    const folderLabel = tree.locator('.red-ui-treeList-label', { hasText: PACKAGE.name }).first();
    await folderLabel.waitFor({ state: 'visible' });
    // A tree item is the label followed by the list of its children, in one content element.
    const item = folderLabel.locator('xpath=..');
    const expanded = async () => (await item.getAttribute('class'))?.includes('expanded') ?? false;
    if (!(await expanded())) await folderLabel.click();
    if (!(await eventually(expanded))) throw new Error(`the ${PACKAGE.name} folder of Import > Examples does not open`);
    const entries = item.locator(':scope > .red-ui-editableList');
    await entries.locator('.red-ui-treeList-label').first().waitFor({ state: 'visible' });
    return entries;
  }

  /**
   * Imports an example into a new flow from Menu > Import > Examples, as a user does: when its nodes
   * already exist (the shared config node) Node-RED offers "Import copy", which reuses an existing
   * config node; the imported nodes follow the mouse until a click on the canvas places them.
   * Returns the new flow's id.
   */
  async importExample(name: string): Promise<string> {
    const before = await this.page.evaluate(() => (globalThis as unknown as EditorWindow).RED.workspaces.active());
    const entries = await this.openImportExamples();
    const entry = entries.locator('.red-ui-treeList-label', { has: this.page.getByText(name, { exact: true }) });
    const importButton = this.page.locator('#red-ui-clipboard-dialog-ok');
    // The editor loads the example once it is selected and only then enables Import; a click that
    // lands while the tree is still being laid out selects nothing, so it is repeated (at most 3 times).
    for (let attempt = 1; ; attempt++) {
      await entry.click();
      if (await eventually(() => importButton.isEnabled())) break;
      if (attempt === 3) throw new Error(`selecting ${name} in Import > Examples did not enable Import`);
    }
    // "new flow" is a toggle the dialog sets up as it opens: Import is clicked only once it shows selected
    // (on a loaded machine a click landing first was undone, and the example went into the current flow).
    const newFlow = this.page.locator('#red-ui-clipboard-dialog-import-opt-new');
    const newFlowSelected = async () => (await newFlow.getAttribute('class'))?.includes('selected') ?? false;
    for (let attempt = 1; !(await newFlowSelected()); attempt++) {
      await newFlow.click();
      if (await eventually(newFlowSelected)) break;
      if (attempt === 3) throw new Error(`choosing "new flow" for ${name} in Import did not select it`);
    }
    await importButton.click();
    const importCopy = this.page.locator('.red-ui-notification button', { hasText: await this.text('clipboard.import.importCopy') });
    const dragging = () =>
      this.page.evaluate(() => {
        const { RED } = globalThis as unknown as EditorWindow;
        return RED.view.state() === RED.state.IMPORT_DRAGGING;
      });
    const offered = await eventually(async () => (await dragging()) || (await importCopy.isVisible()), SERVER_TIMEOUT_MS);
    if (!offered) throw new Error(`importing ${name} neither imported nor reported a conflict`);
    if (!(await dragging())) {
      await importCopy.click();
      if (!(await eventually(dragging))) throw new Error(`"Import copy" of ${name} did not import`);
    }
    const chart = await this.page.locator('#red-ui-workspace-chart').boundingBox();
    if (!chart) throw new Error('the canvas is not visible');
    await this.page.mouse.move(chart.x + 200, chart.y + 80);
    await this.page.mouse.down();
    await this.page.mouse.up();
    const placed = await eventually(() =>
      this.page.evaluate(() => {
        const { RED } = globalThis as unknown as EditorWindow;
        return RED.view.state() === RED.state.DEFAULT;
      }),
    );
    if (!placed) throw new Error(`the nodes of ${name} could not be placed`);
    const flow = await this.page.evaluate(() => (globalThis as unknown as EditorWindow).RED.workspaces.active());
    if (flow === before) throw new Error(`${name} was not imported into a new flow`);
    return flow;
  }

  /** Removes the nodes a failed test left invalid, so that later tests checking the whole workspace report their own failures only. */
  async removeInvalidNodes(): Promise<void> {
    const leftOver = await this.invalidNodes();
    await this.page.evaluate(
      (ids) => {
        const { RED } = globalThis as unknown as EditorWindow;
        for (const id of ids) RED.nodes.remove(id);
        RED.view.redraw(true);
      },
      leftOver.map((node) => node.id),
    );
  }

  /** Nodes (and the config nodes they use) that the editor marks invalid, as Deploy checks them. */
  invalidNodes(): Promise<DeployResult['invalid']> {
    return this.page.evaluate(() => {
      const { RED } = globalThis as unknown as EditorWindow;
      const invalid: Array<{ id: string; type: string; name: string }> = [];
      const check = (node: EditorNode) => {
        if (node.valid === undefined) RED.editor.validateNode(node);
        if (!node.valid && !node.d) invalid.push({ id: node.id, type: node.type, name: node.name ?? '' });
      };
      RED.nodes.eachConfig(check);
      RED.nodes.eachNode(check);
      return invalid;
    });
  }

  /**
   * Presses Deploy (confirming Node-RED's "not properly configured" question if it asks) and waits
   * for the runtime to accept the flows. Throws if the deploy fails.
   */
  async deploy(): Promise<DeployResult> {
    const invalid = await this.invalidNodes();
    const accepted = this.page.waitForResponse((response) => response.request().method() === 'POST' && new URL(response.url()).pathname.endsWith('/flows'), {
      timeout: SERVER_TIMEOUT_MS,
    });
    await this.page.click('#red-ui-header-button-deploy');
    if (invalid.length > 0) await this.page.click('#red-ui-deploy-dialog-confirm-deploy-deploy');
    const response = await accepted;
    if (response.status() !== 200) throw new Error(`deploy failed: HTTP ${response.status()} ${await response.text()}`);
    const clean = await eventually(() => this.page.evaluate(() => !(globalThis as unknown as EditorWindow).RED.nodes.dirty()));
    if (!clean) throw new Error('the editor still has undeployed changes after Deploy');
    return { invalid };
  }

  /** Clicks the button of an inject node on the canvas. */
  async clickInject(id: string): Promise<void> {
    await this.canvasNode(id).locator('.red-ui-flow-node-button').click();
  }

  /** The status text shown under a node on the canvas, once there is one (empty if none appears). */
  async statusText(id: string, timeoutMs = SERVER_TIMEOUT_MS): Promise<string> {
    const label = this.canvasNode(id).locator('.red-ui-flow-node-status-label');
    let text = '';
    await eventually(async () => {
      text = (await label.count()) > 0 ? ((await label.textContent()) ?? '').trim() : '';
      return text !== '';
    }, timeoutMs);
    return text;
  }

  /** Shows the debug sidebar with only the current flow's messages, cleared. */
  async showDebugOfCurrentFlow(): Promise<void> {
    await this.page.evaluate(() => (globalThis as unknown as EditorWindow).RED.actions.invoke('core:show-debug-tab'));
    await this.page.click('#red-ui-sidebar-debug-filter');
    await this.page.locator('a', { has: this.page.locator('input[name="filter-type"][value="filterCurrent"]') }).click();
    await this.page.click('#red-ui-sidebar-debug-clear');
  }

  /** The number of messages the debug sidebar shows. */
  debugMessageCount(): Promise<number> {
    return this.page.locator('.red-ui-debug-msg').count();
  }

  /** Waits until Node-RED's transient notifications are gone, so they do not cover a screenshot. */
  async waitForNotificationsToClose(): Promise<void> {
    await eventually(async () => (await this.page.locator('.red-ui-notification').count()) === 0, 8_000);
  }

  /** Clicks an empty part of the canvas, which clears the selection. */
  async clearSelection(): Promise<void> {
    const chart = await this.page.locator('#red-ui-workspace-chart').boundingBox();
    if (chart) await this.page.mouse.click(chart.x + chart.width - 40, chart.y + chart.height - 40);
  }

  /**
   * Writes a PNG to test/artifacts/browser/ and returns its path: of the whole page, of one element,
   * of the open dialog (the topmost tray) or of the canvas with the sidebar (the page right of the palette).
   */
  async screenshot(name: string, part: Locator | 'page' | 'dialog' | 'canvas' = 'page'): Promise<string> {
    fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
    const file = path.join(ARTIFACTS_DIR, `${name}.png`);
    const options = { path: file, animations: 'disabled' as const };
    if (part === 'page') {
      await this.page.screenshot(options);
    } else if (part === 'dialog') {
      await this.page.locator('.red-ui-tray').last().screenshot(options);
    } else if (part === 'canvas') {
      const canvas = await this.page.locator('#red-ui-workspace').boundingBox();
      const viewport = this.page.viewportSize();
      if (!canvas || !viewport) throw new Error('the canvas is not visible');
      await this.page.screenshot({ ...options, clip: { x: canvas.x, y: 0, width: viewport.width - canvas.x, height: viewport.height } });
    } else {
      await part.screenshot(options);
    }
    return file;
  }
}

export { eventually, SERVER_TIMEOUT_MS };
