import { createHash } from 'node:crypto';

/**
 * Signs a webhook the way the spec's platform does, written here independently of the node's
 * verifier so that the benchmark and the fuzz pass do not trust the code they exercise:
 * `svc-signature: t=<t>,digestV1=<lowercase hex SHA-256 of "<t>.<secret>.<body>">`.
 */
export function webhookDigest(t: string, secret: string, body: Buffer | string): string {
  return createHash('sha256').update(`${t}.${secret}.`, 'utf8').update(body).digest('hex');
}

export function signatureHeader(t: string, secret: string, body: Buffer | string): string {
  return `t=${t},digestV1=${webhookDigest(t, secret, body)}`;
}

/** The current time as the sandbox sends it: whole seconds since the epoch. */
export function nowSeconds(): string {
  return String(Math.floor(Date.now() / 1000));
}
