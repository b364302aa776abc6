import fs from 'node:fs';
import path from 'node:path';
import type { SandboxOptions } from './options';
import { Sandbox, SandboxModule } from './server';

export * from './server';
export * from './options';
export type { ContentCoding, EchoedRequest, Fault } from './faults';
export { accepts, badRequest, notAcceptable, sendJson } from './http';
export { generatedCredentials, type GeneratedCredentials } from './credentials';
export { SandboxStateFile } from './state-store';

/** A sandbox with every endpoint module in `endpoints/` (one file per endpoint family), serving through `handle` only. */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const sandbox = new Sandbox(options);
  const dir = path.join(__dirname, 'endpoints');
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .sort()) {
    // Found at run time, so a new endpoint family is a new file and nothing else.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const module = require(path.join(dir, file)) as { default: SandboxModule };
    sandbox.use(module.default);
  }
  return sandbox;
}

/** A sandbox (see `createSandbox`) listening on 127.0.0.1 (an ephemeral port unless `port` is given). */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = createSandbox(options);
  await sandbox.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  return sandbox;
}
