import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Writes `file` through a synced temporary file beside it and a rename: readers see the old or the new whole file. */
export async function writeAtomically(file: string, text: string): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await fs.promises.open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.promises.rename(temporary, file);
  } catch (err) {
    await fs.promises.rm(temporary, { force: true });
    throw err;
  }
}

/**
 * Where a write to `file` lands: the path with every symbolic link followed, the folders' and the
 * file's own, also a link to a file that does not exist yet (which a write creates, as a shell's `>`
 * does). Fails (ENOENT) when a folder on the way does not exist, ELOOP after 40 links.
 */
export async function realFile(file: string): Promise<string> {
  try {
    return await fs.promises.realpath(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let current = path.resolve(file);
  for (let links = 0; links <= 40; links++) {
    const candidate = path.join(await fs.promises.realpath(path.dirname(current)), path.basename(current));
    let link: string;
    try {
      link = await fs.promises.readlink(candidate);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Not there (a write creates it), or there and not a link.
      if (code === 'ENOENT' || code === 'EINVAL') return candidate;
      throw err;
    }
    current = path.resolve(path.dirname(candidate), link);
  }
  throw Object.assign(new Error(`too many symbolic links: ${file}`), { code: 'ELOOP' });
}

/**
 * Replaces the real file `file` (no symbolic link: see `realFile`) with what `fill` writes into a
 * temporary file in the same folder, which gets `file`'s permissions, is synced, renamed onto `file`,
 * and the folder synced: after a crash at any point `file` is the old file or the new one, whole
 * (a temporary file may be left beside it, named `<name>.<pid>.<hex>.tmp`).
 */
export async function replaceFile(file: string, fill: (temporary: fs.promises.FileHandle) => Promise<void>): Promise<void> {
  const { mode } = await fs.promises.stat(file);
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await fs.promises.open(temporary, 'wx', 0o600);
    try {
      await handle.chmod(mode & 0o7777);
      await fill(handle);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.rename(temporary, file);
  } catch (err) {
    await fs.promises.rm(temporary, { force: true });
    throw err;
  }
  await syncFolder(path.dirname(file));
}

/**
 * Removes the temporary files a `replaceFile` of `file` left when its process was killed: those of a
 * process that no longer runs (another process's may still be in use).
 */
export async function removeLeftovers(file: string): Promise<void> {
  const folder = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  for (const name of await fs.promises.readdir(folder)) {
    const pid = /^(\d+)\.[0-9a-f]{8}\.tmp$/.exec(name.startsWith(prefix) ? name.slice(prefix.length) : '')?.[1];
    if (pid !== undefined && !isRunning(Number(pid))) await fs.promises.rm(path.join(folder, name), { force: true });
  }
}

/** Whether a process with this id runs on this machine (as any user). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Makes a rename or a new name in `folder` durable. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await fs.promises.open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
