declare module 'node-red-node-test-helper' {
  import type { EventEmitter } from 'node:events';

  namespace helper {
    /** The parts of a running node that tests touch. */
    interface TestNode extends EventEmitter {
      id: string;
      type: string;
      receive(msg: Record<string, unknown>): void;
      status: { (status: object): void; lastCall?: { args: unknown[] }; getCalls?: () => Array<{ args: unknown[] }> };
      error: { (err: unknown, msg?: unknown): void };
      [key: string]: unknown;
    }

    /** The helper's supertest agent on the admin app, as far as tests use it (supertest ships no types). */
    interface AdminRequest {
      post(path: string): AdminRequest;
      send(body: unknown): AdminRequest;
      expect(status: number): Promise<{ status: number; body: unknown }>;
    }

    interface NodeTestHelper {
      init(nodeRedRuntimePath?: string, userSettings?: Record<string, unknown>): void;
      load(nodes: unknown, flow: Array<Record<string, unknown>>, credentials?: Record<string, Record<string, string>>): Promise<void>;
      unload(): Promise<void>;
      getNode(id: string): TestNode;
      clearFlows(): Promise<void>;
      startServer(): Promise<void>;
      stopServer(): Promise<void>;
      url(): string;
      request(): AdminRequest;
      settings(userSettings: Record<string, unknown>): void;
      setFlows(flow: Array<Record<string, unknown>>, type?: string, credentials?: Record<string, Record<string, string>>): Promise<void>;
      log(): { args: unknown[][]; getCalls(): Array<{ args: unknown[] }> };
      _RED: {
        httpNode: unknown;
        httpAdmin: unknown;
        version(): string;
        /** Node-RED's hooks (`RED.hooks`): `onComplete` gets `{ msg, error, node }` for each done(). */
        hooks: { add(name: string, hook: (event: Record<string, unknown>) => void): void; remove(name: string): void };
      };
    }
  }

  const helper: helper.NodeTestHelper;
  export = helper;
}
