/**
 * Errors of the sandbox. Every failure of user code, of its result, or of the
 * isolate that runs it becomes a `SandboxError` whose message is safe to log
 * (user text is truncated and stripped of control characters). Callers decide
 * what, if anything, a client gets to see.
 */
import { safeText } from "../../../../shared/safe-text.ts";

export type SandboxErrorKind =
  /** User code threw (any value, Error or not). */
  | "script"
  /** The program's source did not compile, or its top-level code threw. */
  | "load"
  /** The value user code returned is not plain JSON data, or is too large. */
  | "result"
  /** The host passed arguments or bindings that are not plain JSON data. */
  | "argument"
  /** The isolate hit its memory limit; it was disposed and will be replaced. */
  | "memory"
  /** The wall-clock limit was reached (see `SandboxTimeoutError`). */
  | "timeout"
  /** The isolate died for another reason; it was disposed and will be replaced. */
  | "crashed"
  /** The pool is closed, at capacity, or the program's queue is full. Not the program's fault. */
  | "unavailable";

export class SandboxError extends Error {
  readonly kind: SandboxErrorKind;
  /** The program the failure belongs to (its key), when known. */
  readonly programKey: string | undefined;
  /**
   * For kind "script": what user code threw (name and message, truncated), e.g.
   * so that a rule can report the message of the error its code threw.
   */
  readonly scriptError: { name: string; message: string } | undefined;

  constructor(
    kind: SandboxErrorKind,
    message: string,
    options: { programKey?: string; cause?: unknown; scriptError?: { name: string; message: string } } = {},
  ) {
    super(safeText(message, 1000), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SandboxError";
    this.kind = kind;
    this.programKey = options.programKey;
    this.scriptError = options.scriptError
      ? {
          name: safeText(options.scriptError.name, 100),
          message: safeText(options.scriptError.message, 1000),
        }
      : undefined;
  }
}

export class SandboxTimeoutError extends SandboxError {
  readonly timeoutMs: number;

  constructor(timeoutMs: number, message: string, options: { programKey?: string; cause?: unknown } = {}) {
    super("timeout", message, options);
    this.name = "SandboxTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** The call's time ran out before an isolate of its program became free to run it. */
export class IsolateWaitTimeoutError extends SandboxTimeoutError {
  constructor(timeoutMs: number, options: { programKey?: string; cause?: unknown } = {}) {
    super(timeoutMs, `No isolate became free for this program within ${timeoutMs} ms`, options);
    this.name = "IsolateWaitTimeoutError";
  }
}

/**
 * Thrown by a host function to reject the script's call with `message`, which
 * the script sees as an `Error`. Any other error a host function throws reaches
 * the script only as "Host function <name> failed" (no internals leak in).
 */
export class SandboxHostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxHostError";
  }
}
