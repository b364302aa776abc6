import { credentialLines } from './banner';
import { startSandbox } from './index';
import { describeModes, modesFromEnv } from './modes';

/** `npm run sandbox`: the sandbox platform on its own, for trying flows by hand. It keeps nothing across restarts. */
async function main(): Promise<void> {
  const port = Number(process.env.SANDBOX_PORT ?? 18790);
  const modes = modesFromEnv(process.env, { typicalDurations: true });
  const sandbox = await startSandbox({ port, ...modes });
  console.log(`sandbox platform listening on ${sandbox.url}, credentials:\n${credentialLines(sandbox.url).join('\n')}`);
  console.log(describeModes(modes));
  const stop = () => {
    sandbox.close().then(() => process.exit(0), exitWith);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function exitWith(err: unknown): void {
  console.error(err);
  process.exit(1);
}

main().catch(exitWith);
