import { ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';

/**
 * The benchmark runs Node-RED, the sandbox and the load generator each in its own process, so that
 * none of them steals another's event loop. They talk over the IPC channel of `fork`: the parent
 * calls a method by name with one JSON value and gets one JSON value back.
 */

/** What a child process offers: methods taking one JSON value. */
export type Methods = Record<string, (params: never) => unknown>;

interface CallMessage {
  id: number;
  method: string;
  params: unknown;
}

interface ReplyMessage {
  id: number;
  result?: unknown;
  error?: string;
}

interface ReadyMessage {
  ready: true;
  info: unknown;
}

/** In the child: replies to the parent's calls and tells it the child is ready (with `info`, such as a port). */
export function serve(methods: Methods, info: unknown = {}): void {
  const send = (message: ReplyMessage | ReadyMessage) => process.send?.(message);
  process.on('message', (message: CallMessage) => {
    const method = methods[message.method];
    Promise.resolve()
      .then(() => {
        if (!method) throw new Error(`unknown method ${message.method}`);
        return method(message.params as never);
      })
      .then(
        (result) => send({ id: message.id, result }),
        (err: unknown) => send({ id: message.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
  });
  // The parent is gone (it crashed or was stopped): nothing is left to do here.
  process.on('disconnect', () => process.exit(0));
  send({ ready: true, info });
}

/**
 * In the child, as its entry point: runs `main` (which calls `serve`), then on SIGTERM the stop function it gave, and
 * exits: 0 once stopped, 1 (with the error on stderr) if either failed.
 */
export function runChild(main: () => Promise<() => Promise<void>>): void {
  const fail = (err: unknown) => {
    console.error(err);
    process.exit(1);
  };
  main().then((stop) => {
    process.on('SIGTERM', () => {
      stop().then(() => process.exit(0), fail);
    });
  }, fail);
}

type Params<F> = F extends (params: infer P) => unknown ? P : never;

/** In the parent: a running child process and typed calls to its methods. */
export class Child<M extends Methods, Info = unknown> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  private exited = false;

  private constructor(
    readonly name: string,
    private readonly process: ChildProcess,
    readonly info: Info,
  ) {
    process.on('message', (message: ReplyMessage) => {
      const call = this.pending.get(message.id);
      if (!call) return;
      this.pending.delete(message.id);
      if (message.error !== undefined) call.reject(new Error(`${name}: ${message.error}`));
      else call.resolve(message.result);
    });
    process.on('exit', (code, signal) => {
      this.exited = true;
      for (const call of this.pending.values()) call.reject(new Error(`${name} exited (${signal ?? code}) during a call`));
      this.pending.clear();
    });
  }

  /**
   * Forks `script` and resolves once it has called `serve`. Its output goes to `logFile`, so that the
   * benchmark's own output stays a readable report.
   */
  static start<M extends Methods, Info = unknown>(
    name: string,
    script: string,
    options: {
      execArgv?: string[];
      env?: NodeJS.ProcessEnv;
      logFile: string;
      /** A program, with its arguments, that runs Node itself: `['valgrind', '--tool=callgrind']` runs the child under valgrind. */
      wrapper?: string[];
    },
  ): Promise<Child<M, Info>> {
    const log = fs.openSync(options.logFile, 'w');
    const [wrapperPath, ...wrapperArgs] = options.wrapper ?? [];
    const child = fork(script, [], {
      execPath: wrapperPath ?? process.execPath,
      execArgv: wrapperPath ? [...wrapperArgs, process.execPath, ...(options.execArgv ?? [])] : (options.execArgv ?? []),
      env: { ...process.env, ...options.env },
      stdio: ['ignore', log, log, 'ipc'],
    });
    fs.closeSync(log);
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${name} exited (${code}) before it was ready; see ${options.logFile}`));
      child.once('exit', onExit);
      child.once('message', (message: ReadyMessage) => {
        child.off('exit', onExit);
        resolve(new Child<M, Info>(name, child, message.info as Info));
      });
    });
  }

  /** The child's process id (valgrind's, for a child run under it: the same process). */
  get pid(): number | undefined {
    return this.process.pid;
  }

  call<K extends keyof M & string>(method: K, params: Params<M[K]>): Promise<Awaited<ReturnType<M[K]>>> {
    if (this.exited) return Promise.reject(new Error(`${this.name} is not running`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.process.send({ id, method, params } satisfies CallMessage);
    });
  }

  /** Ends the child (SIGTERM, then SIGKILL if it lingers). */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
