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
