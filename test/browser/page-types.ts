/**
 * What the suite's page functions (run inside the editor by `page.evaluate`) use of the browser and of
 * Node-RED's editor API. The project compiles without the DOM library, so each page function starts
 * with `const { RED, document } = globalThis as unknown as EditorWindow;` (which is plain
 * `globalThis` once compiled).
 */

export interface PageElement {
  readonly id: string;
  readonly tagName: string;
  readonly textContent: string | null;
  readonly innerText: string;
  readonly outerHTML: string;
  readonly value?: string;
  readonly type?: string;
  readonly classList: { contains(name: string): boolean };
  readonly childNodes: ArrayLike<{ readonly nodeType: number; readonly textContent: string | null }>;
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
  closest(selector: string): PageElement | null;
  getClientRects(): ArrayLike<unknown>;
}

export interface PropertyDefinition {
  value?: unknown;
  type?: string;
  required?: boolean;
  validate?: unknown;
}

export interface NodeDefinition {
  category?: string;
  defaults: Record<string, PropertyDefinition>;
  credentials?: Record<string, { type: string }>;
}

export interface EditorNode {
  id: string;
  type: string;
  z?: string;
  name?: string;
  d?: boolean;
  valid?: boolean;
  users?: unknown[];
  _def: NodeDefinition;
}

export interface RedApi {
  nodes: {
    filterNodes(filter: { type?: string; z?: string }): EditorNode[];
    node(id: string): EditorNode | null;
    workspace(id: string): { label?: string } | null;
    eachNode(callback: (node: EditorNode) => void): void;
    eachConfig(callback: (node: EditorNode) => void): void;
    getType(type: string): NodeDefinition | null;
    dirty(value?: boolean): boolean;
    version(): string | null;
    remove(id: string): unknown;
  };
  editor: { validateNode(node: EditorNode): void };
  workspaces: { active(): string };
  view: { state(): number; redraw(updateActive?: boolean): void; importNodes(nodes: object[], options?: object): void };
  state: Record<string, number>;
  actions: { invoke(name: string): void };
  _(key: string, options?: Record<string, unknown>): string;
}

/** What the suite uses of jQuery and of Node-RED's TypedInput widget on it. */
export interface JQueryElements {
  typedInput(method: 'type' | 'value'): string;
  typedInput(method: 'type' | 'value', value: string): JQueryElements;
  trigger(event: string): JQueryElements;
}

export interface EditorWindow {
  RED: RedApi;
  $: (selector: string) => JQueryElements;
  document: {
    documentElement: PageElement;
    getElementById(id: string): PageElement | null;
    querySelector(selector: string): PageElement | null;
    querySelectorAll(selector: string): ArrayLike<PageElement>;
  };
  getComputedStyle(element: PageElement): { color: string; backgroundColor: string; fill: string; display: string; opacity: string };
}
