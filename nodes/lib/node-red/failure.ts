import { ErrorCode, SvcError, describeCause } from '../util/errors';
import { CatalogText, catalogText } from '../util/catalog-text';
import { translate } from './i18n';

/**
 * A failure as the pack reports it to Node-RED, the one shape of every node's errors: an `Error` whose
 * `message` is one line in the runtime's language, the reason then what to do, with no class name
 * before it; `code` (never translated: Catch flows switch on it) and `statusCode` as they were. What
 * `done(err)`, `node.error(err, msg)` and Node-RED's hooks get is thus an `instanceof Error` with a
 * `stack`.
 *
 * Node-RED builds a Catch node's msg.error from `toString()` (here the message alone) and the error's
 * own `code`, `stack` and `cause`: `stack` is read through the prototype, never an own member, so
 * msg.error stays `{ message, source, code }` (and `cause`), one line a person reads without a stack of
 * file paths; `cause` is set only for data the service responded with (an envelope), never an Error,
 * whose own stack and untranslated text would follow it into msg.error. The stack's first line is the
 * message, the text every other place shows (masked and translated before it is built); the frames
 * below it are those where the failure was raised, without that error's own first line, which holds
 * its text as first written.
 */
export class Failure extends Error {
  // Declared, not defined: a member that is not set stays absent, so Node-RED copies no `cause: undefined`.
  declare readonly code?: ErrorCode;
  declare readonly statusCode?: number;
  /** A short figure for the status, such as `2/2` for a used-up daily limit. */
  declare readonly statusDetail?: string;
  /** An input refusal's reason, without what to do: the status shows it, naming the field (`address is empty`). */
  declare readonly statusReason?: string;
  /** Data the service responded with (an envelope), never an Error: see above. */
  declare readonly cause?: unknown;
  #trace: string | undefined;

  /** `origin`: what was thrown, an SvcError's code, status and envelope kept, and its frames taken for the stack. */
  constructor(text: string, origin?: unknown, statusReason?: string) {
    super(text);
    const frames = framesOf(origin instanceof Error ? origin : this);
    // The own stack V8 gave this error goes: the prototype's accessor below stands for it.
    delete this.stack;
    this.name = origin instanceof Error ? origin.name : 'Error';
    this.#trace = frames === '' ? `${this.name}: ${text}` : `${this.name}: ${text}\n${frames}`;
    if (origin instanceof SvcError) {
      this.code = origin.code;
      if (origin.statusCode !== undefined) this.statusCode = origin.statusCode;
      if (origin.statusDetail !== undefined) this.statusDetail = origin.statusDetail;
      if (statusReason !== undefined) this.statusReason = statusReason;
      if (origin.cause !== undefined && !(origin.cause instanceof Error)) this.cause = origin.cause;
    }
  }

  /** The text alone: Node-RED puts an error's toString() in msg.error.message, where a class name helps no one. */
  override toString(): string {
    return this.message;
  }

  static {
    Object.defineProperty(Failure.prototype, 'stack', {
      get(this: object): string | undefined {
        return #trace in this ? this.#trace : undefined;
      },
      // Node-RED and other code may set a stack (to add to it); that value is the one read from then on.
      set(this: object, value: unknown) {
        if (#trace in this && typeof value === 'string') this.#trace = value;
      },
      configurable: true,
    });
  }
}

/**
 * The call frames of an error's stack (its `    at …` lines), without the first line(s) before them,
 * which repeat its message: only code locations, never a text.
 */
function framesOf(error: Error): string {
  let stack: unknown;
  try {
    stack = error.stack;
  } catch {
    return '';
  }
  if (typeof stack !== 'string') return '';
  const end = stack.indexOf(error.message);
  if (end < 0) return '';
  return stack
    .slice(end + error.message.length)
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .join('\n');
}

/** The failure `err` (any thrown value) as reported: see Failure. */
export function failure(err: unknown): Failure {
  if (err instanceof Failure) return err;
  if (!(err instanceof SvcError)) return new Failure(oneLine(describeCause(err)), err);
  const reason = oneLine(err.text ? translate(err.text) : err.message);
  // The pack's own refusal of a message names the field; the platform's reasons stay out of the status (they may quote the request).
  const statusReason = err.code === 'INVALID_INPUT' ? reason : undefined;
  // What to do is said after the reason, unless the reason says it; a cancelled message needs nothing done.
  if (err.code === 'CANCELLED' || err.saysWhatToDo) return new Failure(reason, err, statusReason);
  return new Failure(translate(catalogText('error.report', { reason, hint: hintFor(err) })), err, statusReason);
}

/** What to do about a failure of its code; for a failed connection, naming the settings it went by (Base URL … and Proxy when one is set). */
function hintFor(err: SvcError): CatalogText {
  if (!err.connection) return catalogText(`error.hint.${err.code}`);
  const { address, proxy } = err.connection;
  const settings = proxy ? catalogText('error.settings.withProxy', { address }) : address;
  return catalogText(`error.hint.connection.${err.code}`, { settings });
}

/** Line breaks and runs of blanks (a service's own text may have them) as single spaces. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
