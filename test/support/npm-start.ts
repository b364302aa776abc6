import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { BUILD_DIR } from './paths';
import { freePorts, flowsStarted, userEnv } from './node-red-process';
import type { NodeRed5Install } from './node-red-5';
import { killGroup, spawnGroup } from './process-group';

/** The port `npm start` listens on (1880 for a user): the editor's, which serves the built-in sandbox too. */
export interface StartPorts {
  editor: number;
}

/** A free port for an `npm start` (freePorts). */
export async function freeStartPorts(): Promise<StartPorts> {
  const [editor] = await freePorts(1);
  return { editor };
}

/** The built-in sandbox's own credentials, as its user directory keeps them (`svc-location/sandbox.json`). */
export interface BuiltinSandboxKeys {
  clientId: string;
  clientSecret: string;
  apiKey: string;
  pubsubApiKey: string;
  webhookSecret: string;
}

/**
 * `npm start` as a user runs it (the built dist/test/sandbox/start.js, which `npm start` runs after
 * building), on free ports and a user directory of the test's own (START_USERDIR), its whole output
 * kept. Stopped with SIGTERM, as Ctrl-C stops it; every start is stopped by `stop()`. With a
 * Node-RED 5 install it runs on that install's Node, with NODE_RED_PATH naming its Node-RED.
 * Started once its flows have started and its editor listens (the line it prints after both).
 * `env` is added to the user's environment, without NODE_RED_CREDENTIAL_SECRET unless it names it.
 */
export class NpmStart {
  readonly output: string[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;

  static async start(
    userDir: string,
    args: string[] = [],
    ports?: StartPorts,
    nodeRed5?: NodeRed5Install,
    timeoutMs = 60_000,
    env: NodeJS.ProcessEnv = {},
  ): Promise<NpmStart> {
    const chosen = ports ?? (await freeStartPorts());
    nodeRed5?.prepare();
    const started = new NpmStart(userDir, args, chosen, nodeRed5, env);
    const deadline = Date.now() + timeoutMs;
    const listening = `Node-RED editor: ${started.editorUrl}/`;
    while (!started.output.some(flowsStarted) || !started.output.some((line) => line.startsWith(listening))) {
      if (started.child.exitCode !== null) throw new Error(`npm start exited early:\n${started.output.join('\n')}`);
      if (Date.now() > deadline) {
        await started.stop();
        throw new Error(`npm start did not start its flows within ${timeoutMs} ms:\n${started.output.join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return started;
  }

  private constructor(
    readonly userDir: string,
    args: string[],
    readonly ports: StartPorts,
    nodeRed5: NodeRed5Install | undefined,
    extraEnv: NodeJS.ProcessEnv,
  ) {
    const env = {
      NODE_RED_CREDENTIAL_SECRET: undefined,
      ...extraEnv,
      START_USERDIR: userDir,
      PORT: String(ports.editor),
    };
    this.child = spawnGroup(nodeRed5?.node ?? process.execPath, [path.join(BUILD_DIR, 'test', 'sandbox', 'start.js'), ...args], {
      env: userEnv(nodeRed5 ? { ...env, NODE_RED_PATH: nodeRed5.nodeRedDir } : env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (stream) readline.createInterface({ input: stream }).on('line', (line) => this.output.push(line));
    }
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  get editorUrl(): string {
    return `http://127.0.0.1:${this.ports.editor}`;
  }

  /** The built-in sandbox this Node-RED serves (while a config node on it is deployed). */
  get sandboxUrl(): string {
    return `${this.editorUrl}/svc-sandbox`;
  }

  /** The built-in sandbox's credentials (made when it first started). */
  sandboxKeys(): BuiltinSandboxKeys {
    return JSON.parse(fs.readFileSync(path.join(this.userDir, 'svc-location', 'sandbox.json'), 'utf8')) as BuiltinSandboxKeys;
  }

  /** What it printed before Node-RED's own log began (the banner: credentials, sandbox state, flows). */
  banner(): string {
    const end = this.output.findIndex((line) => /Welcome to Node-RED/.test(line));
    return this.output.slice(0, end < 0 ? undefined : end).join('\n');
  }

  /** SIGTERM (as Ctrl-C), then SIGKILL after `timeoutMs`; resolves with the exit code. */
  async stop(timeoutMs = 15_000): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const pid = this.child.pid;
    if (pid === undefined) return null;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
