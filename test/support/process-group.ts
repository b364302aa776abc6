import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';

/**
 * Child processes started in a process group of their own (the group id is the child's PID), so that
 * stopping one also stops what it started: npm's lifecycle scripts and tsc, Node-RED's palette
 * `npm install`. Killing the child alone would leave those running. A group is killed as soon as its
 * leader exits (anything left is a stray), and every group still alive when this process exits (a
 * failed or interrupted test run) is killed then.
 */

const liveGroups = new Set<number>();
process.on('exit', () => {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
});

/** Sends `signal` to every process in the group led by `pid`; a group that is gone already is fine. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** `spawn` in a new process group, tracked until its leader has exited and the rest of the group is killed. */
export function spawnGroup(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  const pid = child.pid;
  if (pid !== undefined) {
    liveGroups.add(pid);
    child.once('exit', () => {
      killGroup(pid, 'SIGKILL');
      liveGroups.delete(pid);
    });
  }
  return child;
}

export interface CommandOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** The whole group is killed when the command has not finished by then. */
  timeoutMs: number;
}

export interface CommandOutput {
  stdout: string;
  stderr: string;
}

/** Runs a command to completion; rejects, with its output, when it fails or runs out of time. */
export function runCommand(command: string, args: string[], options: CommandOptions): Promise<CommandOutput> {
  return new Promise((resolve, reject) => {
    const child = spawnGroup(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
    }, options.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const output = { stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') };
      if (code === 0) return resolve(output);
      const why = timedOut ? `did not finish within ${options.timeoutMs} ms` : `failed (${signal ?? `exit code ${code}`})`;
      reject(new Error(`${command} ${args.join(' ')} in ${options.cwd} ${why}:\n${output.stdout}\n${output.stderr}`));
    });
  });
}
