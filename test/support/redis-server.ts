import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { freePort } from './node-red-process';

/** Debian's redis-server (`apt-get install redis-server`; .ci/run installs it when missing). */
export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
/** Debian's redis-sentinel (`apt-get install redis-sentinel`; .ci/run installs it when missing). */
export const REDIS_SENTINEL = process.env.REDIS_SENTINEL ?? '/usr/bin/redis-sentinel';

/**
 * A real redis-server on a free loopback port, in memory only (no RDB or AOF file), for the suites
 * that run several Node-RED instances. Stopped by its PID; `restart` brings it back on the same port,
 * empty, as a Redis that lost its data would come back.
 */
/** A certificate and key (PEM files) and the CA that signed it: the server then accepts TLS only (`rediss://`). */
export interface RedisTls {
  certFile: string;
  keyFile: string;
  caFile: string;
}

/** How a server of a Sentinel deployment or a Cluster is started, beyond a plain one. */
export interface RedisRole {
  /** A configuration file (written to the server's directory and named first), as a Sentinel needs one it can rewrite. */
  config?: string;
  /** More command-line options (`--replicaof …`, `--cluster-enabled yes`). */
  args?: string[];
  /** The program, when not redis-server (REDIS_SENTINEL). */
  program?: string;
  /** The log line that says the server is ready (a Sentinel's differs). */
  ready?: string;
  /** The port, when it must be known before the server starts (a Sentinel's configuration names the master's). */
  port?: number;
}

export class RedisServer {
  readonly log: string[] = [];
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly tls?: RedisTls,
    private readonly role: RedisRole = {},
  ) {}

  static available(): boolean {
    return fs.existsSync(REDIS_SERVER);
  }

  static async start(tls?: RedisTls, role?: RedisRole): Promise<RedisServer> {
    const server = new RedisServer(role?.port ?? (await freePort()), fs.mkdtempSync(path.join(os.tmpdir(), 'svc-redis-')), tls, role);
    await server.launch();
    return server;
  }

  get url(): string {
    return `${this.tls ? 'rediss' : 'redis'}://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the server and resolves once it accepts connections (at most `timeoutMs`). */
  async launch(timeoutMs = 10_000): Promise<void> {
    const listen = this.tls
      ? // No plain port; clients are not asked for certificates of their own.
        ['--port', '0', '--tls-port', String(this.port), '--tls-cert-file', this.tls.certFile, '--tls-key-file', this.tls.keyFile]
      : ['--port', String(this.port)];
    const tlsCa = this.tls ? ['--tls-ca-cert-file', this.tls.caFile, '--tls-auth-clients', 'no'] : [];
    const config = this.role.config === undefined ? [] : [path.join(this.dir, 'redis.conf')];
    if (this.role.config !== undefined && !fs.existsSync(config[0])) fs.writeFileSync(config[0], this.role.config);
    const args = [
      ...config,
      ...listen,
      ...tlsCa,
      ...(this.role.args ?? []),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      this.dir,
      '--loglevel',
      'notice',
    ];
    const child = spawn(this.role.program ?? REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let ready: () => void = () => undefined;
    const readyOrExit = new Promise<void>((resolve, reject) => {
      ready = resolve;
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${this.log.join('\n')}`)));
      child.once('error', reject);
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      readline.createInterface({ input: stream }).on('line', (line) => {
        this.log.push(line);
        if (line.includes(this.role.ready ?? 'Ready to accept connections')) ready();
      });
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`redis-server did not start within ${timeoutMs} ms:\n${this.log.join('\n')}`)), timeoutMs);
    });
    try {
      await Promise.race([readyOrExit, timeout]);
    } catch (err) {
      await this.stop();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGTERM to its PID (SIGKILL after `timeoutMs`); resolves once it has exited. */
  async stop(timeoutMs = 5000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    // A paused server handles no SIGTERM until it runs again.
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  /**
   * SIGSTOP to its PID: the server keeps its data and its connections but replies to nothing, as one
   * cut off by the network would; `resume` (SIGCONT) lets it reply again.
   */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  /** Stops the server and removes its directory. */
  async remove(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
