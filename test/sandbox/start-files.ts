import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * What `npm start` reads and keeps in its user directory besides the flows: flows_cred.json in
 * Node-RED's own format (plain, or encrypted with a credentialSecret), and a backup of the flows and
 * credentials before it writes either. It never writes a file it could not read: an encrypted
 * flows_cred.json that no secret it knows opens is left as it is.
 */

/** The variable that gives `npm start`'s Node-RED its credentialSecret (the name Node-RED's Docker image uses). */
export const SECRET_VARIABLE = 'NODE_RED_CREDENTIAL_SECRET';
/** How many backups `backUp` keeps in `<userDir>/backups/`: the newest. */
export const BACKUPS_KEPT = 5;

/** Credentials by node id, as Node-RED keeps them in flows_cred.json once decrypted; passed on as they are. */
export type Credentials = Record<string, unknown>;

/** A credentialSecret and where it came from (for the terminal; never the secret itself). */
export interface CredentialSecret {
  secret: string;
  source: string;
}

/**
 * Node-RED's credential encryption (@node-red/runtime/lib/nodes/credentials.js): aes-256-ctr, the key
 * the SHA-256 of the secret, the file `{"$": <16-byte IV in hex><ciphertext in base64>}`.
 */
const ALGORITHM = 'aes-256-ctr';

function keyOf(secret: string): Buffer {
  return crypto.createHash('sha256').update(secret).digest();
}

export function encryptCredentials(secret: string, credentials: Credentials): { $: string } {
  const iv = crypto.randomBytes(16);
  const cipher = crypto.createCipheriv(ALGORITHM, keyOf(secret), iv);
  return { $: iv.toString('hex') + cipher.update(JSON.stringify(credentials), 'utf8', 'base64') + cipher.final('base64') };
}

/** The credentials `sealed` holds, or undefined when `secret` does not open it (CTR has no padding: a wrong key yields bytes that are not JSON). */
export function decryptCredentials(secret: string, sealed: string): Credentials | undefined {
  if (!/^[0-9a-f]{32}/i.test(sealed)) return undefined;
  try {
    const decipher = crypto.createDecipheriv(ALGORITHM, keyOf(secret), Buffer.from(sealed.slice(0, 32), 'hex'));
    const parsed: unknown = JSON.parse(decipher.update(sealed.slice(32), 'base64', 'utf8') + decipher.final('utf8'));
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The secrets `npm start` knows for a user directory and what it tells Node-RED. Node-RED takes its
 * secret from the settings' `credentialSecret` and, without one, from the `_credentialSecret` it
 * generated in `.config.runtime.json` (`.config.json` before Node-RED 1.3) when it first ran on that
 * directory with its own settings; with both, it reads the file with the generated one and moves to
 * the user's at its next save.
 */
export interface CredentialKeys {
  /** Node-RED's `credentialSecret`: the user's; undefined to let Node-RED use its generated one; false for plain text. */
  setting: string | false | undefined;
  /** The secret Node-RED reads flows_cred.json with at start, so the one `npm start` writes it with; none: plain text. */
  nodeRedReads: CredentialSecret | undefined;
  /** Every secret known, the user's first, to read the file found with. */
  known: CredentialSecret[];
}

export function credentialKeys(userDir: string, env: NodeJS.ProcessEnv, shown: (file: string) => string): CredentialKeys {
  const user = env[SECRET_VARIABLE] ? { secret: env[SECRET_VARIABLE], source: SECRET_VARIABLE } : undefined;
  const generated = generatedSecret(userDir, shown);
  return {
    setting: user ? user.secret : generated ? undefined : false,
    nodeRedReads: generated ?? user,
    known: [user, generated].filter((key): key is CredentialSecret => key !== undefined),
  };
}

function generatedSecret(userDir: string, shown: (file: string) => string): CredentialSecret | undefined {
  for (const name of ['.config.runtime.json', '.config.json']) {
    const file = path.join(userDir, name);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    try {
      const secret = (JSON.parse(text) as { _credentialSecret?: unknown })._credentialSecret;
      if (typeof secret === 'string' && secret !== '') return { secret, source: `the _credentialSecret in ${shown(file)}` };
    } catch {
      // Not JSON: Node-RED cannot read it either; no secret from there.
    }
    return undefined;
  }
  return undefined;
}

/** What flows_cred.json held. */
export type FoundCredentials =
  | { kind: 'none' }
  | { kind: 'plain'; credentials: Credentials }
  | { kind: 'decrypted'; credentials: Credentials; secret: CredentialSecret }
  /** Encrypted, and none of the secrets known opens it. */
  | { kind: 'sealed' };

/** Reads flows_cred.json; throws (so that nothing is written) when it is not the JSON object Node-RED writes. */
export function readCredentials(file: string, known: CredentialSecret[], shown: (file: string) => string): FoundCredentials {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${shown(file)} cannot be read (${(err as Error).message}): move it away or fix it, then start again`, { cause: err });
  }
  if (!isObject(parsed)) throw new Error(`${shown(file)} is not a JSON object of credentials: move it away or fix it, then start again`);
  const sealed = parsed.$;
  // Node-RED's test for an encrypted file: "$" and nothing else.
  if (typeof sealed !== 'string' || Object.keys(parsed).length !== 1) return { kind: 'plain', credentials: parsed };
  for (const secret of known) {
    const credentials = decryptCredentials(secret.secret, sealed);
    if (credentials) return { kind: 'decrypted', credentials, secret };
  }
  return { kind: 'sealed' };
}

/** Whether two sets of credentials hold the same entries (the order of nodes aside). */
export function sameCredentials(a: Credentials, b: Credentials): boolean {
  const ids = Object.keys(a);
  return ids.length === Object.keys(b).length && ids.every((id) => id in b && JSON.stringify(a[id]) === JSON.stringify(b[id]));
}

/** A backup's directory name: the time it was made, sortable, without characters some file systems refuse. */
const BACKUP_NAME = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z(-\d+)?$/;

/** The backups in `backupsDir`, oldest first; anything else there is not ours and stays. */
export function listBackups(backupsDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(backupsDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((name) => BACKUP_NAME.test(name)).sort();
}

function sameBytes(file: string, copy: string): boolean {
  const read = (f: string): Buffer | undefined => (fs.existsSync(f) ? fs.readFileSync(f) : undefined);
  const [a, b] = [read(file), read(copy)];
  return a === undefined || b === undefined ? a === b : a.equals(b);
}

/** A backup made (or found unchanged) by `backUp`, and the older backups it removed. */
export interface Backup {
  dir: string;
  made: boolean;
  removed: string[];
}

/**
 * Copies `files` (those that exist, byte for byte) to `<userDir>/backups/<time>/` before `npm start`
 * writes any of them, and keeps the newest BACKUPS_KEPT backups. When they are the bytes of the newest
 * backup already, none is made (restarts without changes do not push older states out). Undefined
 * when none of the files exists. The directory is the user's only (it holds credentials).
 */
export function backUp(userDir: string, files: string[], now = new Date()): Backup | undefined {
  const existing = files.filter((file) => fs.existsSync(file));
  if (existing.length === 0) return undefined;
  const backupsDir = path.join(userDir, 'backups');
  const newest = listBackups(backupsDir).at(-1);
  if (newest && files.every((file) => sameBytes(file, path.join(backupsDir, newest, path.basename(file))))) {
    return { dir: path.join(backupsDir, newest), made: false, removed: [] };
  }
  fs.mkdirSync(backupsDir, { recursive: true, mode: 0o700 });
  const stamp = now.toISOString().replace(/:/g, '-').replace('.', '-');
  let dir = path.join(backupsDir, stamp);
  for (let n = 2; fs.existsSync(dir); n++) dir = path.join(backupsDir, `${stamp}-${n}`);
  fs.mkdirSync(dir, { mode: 0o700 });
  for (const file of existing) fs.copyFileSync(file, path.join(dir, path.basename(file)), fs.constants.COPYFILE_EXCL);
  // The one just made stays whatever the clock says of the others' names.
  const older = listBackups(backupsDir).filter((name) => name !== path.basename(dir));
  const removed = older.slice(0, Math.max(0, older.length - (BACKUPS_KEPT - 1)));
  for (const name of removed) fs.rmSync(path.join(backupsDir, name), { recursive: true, force: true });
  return { dir, made: true, removed };
}
