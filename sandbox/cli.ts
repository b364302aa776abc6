import path from 'node:path';
import { parseArgs } from 'node:util';
import { credentialLines, sandboxSettings } from './banner';
import { startSandbox } from './index';
import { describeModes, modesFromEnv } from './modes';
import { SandboxStateFile } from './state-store';

/**
 * The sandbox platform on its own: `svc-sandbox` (the package's bin, for integrators' own tests and
 * CI) and `npm run sandbox` (a clone). It serves until SIGINT or SIGTERM; with `--state FILE` it keeps
 * its topics, subscriptions and jobs (running, or with results not yet expired) in FILE across restarts, without it nothing.
 */

const DEFAULT_PORT = 18790;
const DEFAULT_HOST = '127.0.0.1';
/** How often a run with `--state` writes the state when it changed. */
const SAVE_EVERY_MS = 1000;

export const USAGE = `Usage: svc-sandbox [--port N] [--host HOST] [--state FILE]
       svc-sandbox --print-settings [--port N] [--host HOST]

Runs the sandbox platform of @svc/node-red-location: a strict local implementation of the
location platform's interface, for trying and testing flows without an account.

  --port N          the port to listen on (default ${DEFAULT_PORT}, or SANDBOX_PORT)
  --host HOST       the address to listen on (default ${DEFAULT_HOST}: this machine only)
  --state FILE      keep topics, subscriptions and jobs in FILE across restarts
  --print-settings  print one JSON line with the settings an svc-config node needs
                    (URLs, audience, project id, credentials, the examples' webhook secret) and exit
  --help            print this and exit

Modes from the environment: SANDBOX_DURATIONS=typical|off (default typical),
SANDBOX_RATE_LIMIT=on|off|N a minute, SANDBOX_DAILY_LIMIT=on|off|N a day (both off by default).
Jobs take time by their size and keep their results 24 hours; webhooks are retried (five attempts
at most) and each failed attempt is written here. Times and caps: docs/sandbox.md of the repository.
SIGINT or SIGTERM stops it.`;

interface CliOptions {
  port: number;
  host: string;
  state?: string;
  printSettings: boolean;
  help: boolean;
}

/** The options in `args`; throws on an unknown option or a port that is not one. */
export function cliOptions(args: string[], env: NodeJS.ProcessEnv): CliOptions {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      state: { type: 'string' },
      'print-settings': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  const portText = values.port ?? env.SANDBOX_PORT ?? String(DEFAULT_PORT);
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number, got ${JSON.stringify(portText)}`);
  const host = values.host ?? DEFAULT_HOST;
  if (host.trim() === '') throw new Error('--host must name an address');
  return {
    port,
    host,
    state: values.state === undefined ? undefined : path.resolve(values.state),
    printSettings: values['print-settings'] ?? false,
    help: values.help ?? false,
  };
}

/** Runs the command line `args`; resolves once the sandbox listens (or the settings or usage are printed). */
export async function run(args: string[]): Promise<void> {
  let options: CliOptions;
  try {
    options = cliOptions(args, process.env);
  } catch (err) {
    console.error(`svc-sandbox: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    console.log(USAGE);
    return;
  }
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`;
  if (options.printSettings) {
    console.log(JSON.stringify(sandboxSettings(url)));
    return;
  }
  const modes = modesFromEnv(process.env, { typicalDurations: true });
  // Each webhook delivered and each attempt that fails is one line on the console.
  const sandbox = await startSandbox({
    port: options.port,
    host: options.host,
    ...modes,
    warn: (line) => console.warn(`sandbox: ${line}`),
    info: (line) => console.log(`sandbox: ${line}`),
  });
  console.log(`sandbox platform listening on ${sandbox.url}, credentials:\n${credentialLines(sandbox.url).join('\n')}`);
  console.log(describeModes(modes));
  const state = options.state === undefined ? undefined : new SandboxStateFile(sandbox, options.state);
  if (state) {
    const counts = state.load();
    console.log(
      counts
        ? `sandbox state: kept from the last run (${state.file}): ${counts.topics} topic(s), ${counts.subscriptions} subscription(s), ${counts.jobs} job(s)`
        : `sandbox state: none yet; kept in ${state.file} from now on`,
    );
  }
  const saver = state ? setInterval(() => state.save(), SAVE_EVERY_MS) : undefined;
  const stop = () => {
    clearInterval(saver);
    state?.save();
    sandbox.close().then(() => process.exit(0), exitWith);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function exitWith(err: unknown): void {
  console.error(err);
  process.exit(1);
}

// `npm run sandbox` runs this file; the bin (bin/svc-sandbox.js) requires it and calls run.
if (require.main === module) run(process.argv.slice(2)).catch(exitWith);
