/**
 * Errors as they may be logged. An error's message can quote request data —
 * V8's JSON.parse error quotes its input, a rule's error whatever its code put
 * there, a provider's the credentials it was given — so the message itself never
 * reaches a log line: its fingerprint does (the first 12 hex digits of its
 * SHA-256, enough to match a log line with the message a client was shown or an
 * operator reproduces), with the error's name, its stack frames without the
 * message, and the same for its causes.
 */
import { createHash } from "node:crypto";

export function fingerprint(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}

export interface LoggableError {
  name: string;
  fingerprint: string;
  /** Stack frames (`at …` lines), without the message line(s) that head a stack. */
  frames?: string[];
  /** What kind of failure, when the error says (a sandbox error's kind). */
  kind?: string;
  /** An API error's code and status: ours, never customer text. */
  errorCode?: number;
  statusCode?: number;
  cause?: LoggableError;
}

const MAX_FRAMES = 20;
const MAX_CAUSES = 3;

function framesOf(stack: unknown, message: string): string[] | undefined {
  if (typeof stack !== "string") return undefined;
  // The stack starts with "<name>: <message>", however many lines the message has.
  const frames = stack
    .split("\n")
    .slice(message.split("\n").length)
    .filter((line) => /^\s+at /.test(line))
    .map((line) => line.trim());
  return frames.length > 0 ? frames.slice(0, MAX_FRAMES) : undefined;
}

export function loggableError(err: unknown, depth = 0): LoggableError {
  if (!(err instanceof Error)) {
    return { name: typeof err, fingerprint: fingerprint(String(err)) };
  }
  const fields = err as Error & { kind?: unknown; errorCode?: unknown; statusCode?: unknown };
  const described: LoggableError = {
    name: String(err.name).slice(0, 100),
    fingerprint: fingerprint(err.message),
  };
  const frames = framesOf(err.stack, err.message);
  if (frames) described.frames = frames;
  if (typeof fields.kind === "string") described.kind = fields.kind;
  if (typeof fields.errorCode === "number") described.errorCode = fields.errorCode;
  if (typeof fields.statusCode === "number") described.statusCode = fields.statusCode;
  if (err.cause !== undefined && depth < MAX_CAUSES) described.cause = loggableError(err.cause, depth + 1);
  return described;
}
