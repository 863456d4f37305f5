/**
 * The code that prepares a fresh isolate before any user code runs. It is
 * evaluated once per isolate with `context.evalClosure` and returns the two
 * functions the host calls into: `[invoke, deliver]`.
 *
 * Only strings cross the isolate boundary in either direction: arguments and
 * bindings come in as JSON text, results go out as an answer (answers.ts:
 * "R<json>" value, "R" undefined, "E<json>" error {name, message, result?}).
 * Everything the bootstrap needs is captured here, before user code can
 * replace globals; what user code does to the globals afterwards only affects
 * its own answers, which the host validates again.
 *
 * Async host functions (and timers) never hand the isolate a host promise:
 * the script's call posts a request (id, name, argsJson) and the host later
 * calls `deliver(id, answer)`. `deliver` settles the script's promise only
 * while the call that made the request is still running, so nothing left
 * behind by a call can wake up once the call is over (this does not depend on
 * Promise.prototype.then, which user code may replace).
 *
 * The code itself is bootstrap.js, one function expression. Closure arguments:
 *   $0  request sink (id, name, argsJson) => void        (an ivm.Callback, "ignored" mode)
 *   $1  sync host dispatcher (name, argsJson) => string  (an ivm.Callback)
 *   $2  console sink (level, text) => void               (an ivm.Callback, "ignored" mode)
 *   $3  JSON text of BootstrapOptions
 */
import { isolateFunction } from "./isolate-script.ts";

export interface BootstrapOptions {
  /** Host functions to install: dotted global path, and whether the script sees it as sync. */
  hostFunctions: { path: string; sync: boolean }[];
  /** Results whose JSON text is longer than this many characters are refused inside the isolate. */
  maxResultChars: number;
  /** Compiled expression / body cache size per isolate. */
  maxCompiled: number;
  /** console.* lines per call; more are dropped. */
  maxConsoleLines: number;
  /** setTimeout calls per call; more throw (the host enforces it too). */
  maxTimersPerCall: number;
}

/**
 * The `context.evalClosure` source: calls the function expression in bootstrap.js (read once at
 * start) with the closure arguments $0..$3 and returns its `[invoke, deliver]`.
 */
export const BOOTSTRAP_SOURCE = `return (${isolateFunction(import.meta.dirname, "bootstrap.js")})($0, $1, $2, $3);`;
