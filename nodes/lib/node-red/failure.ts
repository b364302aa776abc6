import type { Node } from './types';
import { ErrorCode, SvcError, describeCause } from '../util/errors';
import { CatalogText, catalogText } from '../util/catalog-text';
import { translate } from './i18n';
import type { NodeStatus } from './status';

/**
 * A failure as the pack reports it to Node-RED, the one shape of every node's errors: one line in the
 * runtime's language, the reason then what to do, with no class name before it and no stack after it;
 * `code` (never translated: Catch flows switch on it) and `statusCode` as they were.
 *
 * Why a String object: Node-RED builds msg.error from an error's toString() and its own `code`,
 * `stack` and `cause`, so Catch nodes get the text and the code; and the debug sidebar shows an
 * uncaught one as a line of text, as it shows the core nodes' errors, where an Error object is shown
 * as `{ name, message, code, stack }` with the message cut after 30 characters and a stack of file
 * paths inside.
 */
export class Failure extends String {
  readonly message: string;
  // Declared, not defined: a member that is not set stays absent, so Node-RED copies no `cause: undefined`.
  declare readonly code?: ErrorCode;
  declare readonly statusCode?: number;
  /** A short figure for the status, such as `2/2` for a used-up daily limit. */
  declare readonly statusDetail?: string;
  /** Data the service responded with (an envelope), never an Error: that one's own stack would follow it into msg.error. */
  declare readonly cause?: unknown;

  constructor(text: string, err?: SvcError) {
    super(text);
    this.message = text;
    if (err) {
      this.code = err.code;
      if (err.statusCode !== undefined) this.statusCode = err.statusCode;
      if (err.statusDetail !== undefined) this.statusDetail = err.statusDetail;
      if (err.cause !== undefined && !(err.cause instanceof Error)) this.cause = err.cause;
    }
  }
}
// The debug sidebar labels a logged value by its constructor's name: "String", as for text.
Object.defineProperty(Failure.prototype, 'constructor', { value: String });

/** The failure `err` (any thrown value) as reported: see Failure. */
export function failure(err: unknown): Failure {
  if (err instanceof Failure) return err;
  if (!(err instanceof SvcError)) return new Failure(oneLine(describeCause(err)));
  const reason = oneLine(err.text ? translate(err.text) : err.message);
  // What to do is said after the reason, unless the reason says it; a cancelled message needs nothing done.
  if (err.code === 'CANCELLED' || err.saysWhatToDo) return new Failure(reason, err);
  return new Failure(translate(catalogText('error.report', { reason, hint: hintFor(err) })), err);
}

/** What to do about a failure of its code; for a failed connection, naming the settings it went by (Base URL … and Proxy when one is set). */
function hintFor(err: SvcError): CatalogText {
  if (!err.connection) return catalogText(`error.hint.${err.code}`);
  const { address, proxy } = err.connection;
  const settings = proxy ? catalogText('error.settings.withProxy', { address }) : address;
  return catalogText(`error.hint.connection.${err.code}`, { settings });
}

/**
 * Reports a failure of `node` that belongs to no message (a node that cannot start as configured),
 * in the same shape, with its status.
 */
export function reportFailure(node: Node, status: NodeStatus, err: unknown): void {
  const reported = failure(err);
  status.error(reported);
  node.error(reported);
}

/** Line breaks and runs of blanks (a service's own text may have them) as single spaces. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
