import type { CheckResult } from '../platform/connection-test';
import type { SharedCheck } from '../state/shared-check';
import { CatalogText, catalogText } from '../util/catalog-text';
import { translate } from './i18n';

/** What Test connection responds with and audits: one line per check, and each check's outcome. */

/** A check's result as the report shows it: the platform's credentials and shared state alike. */
type Result = CheckResult | SharedResult;
export interface SharedResult {
  credential: 'shared';
  outcome: 'accepted' | 'failed' | 'retype';
  code: string | null;
  statusCode: null;
  message: CatalogText;
}

/** A stored or `${NAME}` Redis URL this test may not use: the dialog asks for it typed. */
export function retypeRedisUrl(): SharedResult {
  return {
    credential: 'shared',
    outcome: 'retype',
    code: 'INVALID_INPUT',
    statusCode: null,
    message: catalogText('test.retype.notRunning', { secret: catalogText('test.secret.shared') }),
  };
}

/** The shared-state check as the report shows it. */
export function sharedResult(check: SharedCheck): SharedResult {
  const { outcome, problem, code, address, cause } = check;
  const message =
    problem === null ? catalogText('test.shared.accepted', { address }) : catalogText(`test.shared.${problem}`, { address, cause, code: code ?? '' });
  return { credential: 'shared', outcome, code, statusCode: null, message };
}

interface Reply {
  ok: boolean;
  /** One line: "token ✓ · API key ✗ 401 · topics key not set". */
  message: string;
  /** The first check that did not pass, if any. */
  code: string | null;
  statusCode: number | null;
  checks: Array<{ credential: Result['credential']; outcome: Result['outcome']; code: string | null; statusCode: number | null; message: string }>;
}

/** The route's response: ok when a check passed and none failed, the one-line summary, the first problem. */
export function replyFor(results: Result[]): Reply {
  const problem = results.find((r) => r.outcome === 'refused' || r.outcome === 'failed' || r.outcome === 'retype');
  return {
    ok: !problem && results.some((r) => r.outcome === 'accepted'),
    message: results.map((r) => translate(lineOf(r))).join(' · '),
    code: problem?.code ?? null,
    statusCode: problem?.statusCode ?? null,
    checks: results.map((r) => ({ credential: r.credential, outcome: r.outcome, code: r.code, statusCode: r.statusCode, message: translate(r.message) })),
  };
}

/** "API key ✗ 401": the credential's part of the one-line summary. */
function lineOf(result: Result): CatalogText {
  return catalogText(`test.line.${result.outcome}`, {
    credential: catalogText(`test.name.${result.credential}`),
    status: result.statusCode === null ? (result.code ?? '') : String(result.statusCode),
  });
}

/** What the audit log keeps of a check: its outcome and status, never a secret or a text. */
export function auditText(result: Result): string {
  return [result.outcome, result.code, result.statusCode].filter((part) => part !== null).join(' ');
}
