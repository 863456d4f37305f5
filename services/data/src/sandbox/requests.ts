/**
 * Checks and encodings shared by both pools: what a program is (sources, host
 * functions, the hash that tells whether a registration changed), how a call
 * or an evaluation becomes a request for the isolate, and how the isolate's
 * tagged answer becomes a value or a SandboxError.
 */
import { createHash } from "node:crypto";
import { answerParts } from "./answers.ts";
import { IsolateWaitTimeoutError, SandboxError, SandboxTimeoutError } from "./errors.ts";
import { toJsonText, utf8LengthExceeds } from "./json.ts";
import type {
  EvaluateOptions,
  HostFunction,
  HostFunctionSpec,
  HostFunctions,
  ProgramSource,
} from "./types.ts";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const IDENTIFIER_PATH = /^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$/;
const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await arguments eval undefined NaN Infinity"
  ).split(" "),
);

export type HostFunctionTable = Map<string, { fn: HostFunction; sync: boolean }>;

/** How the bootstrap's `invoke` runs a request: a function call, or an evaluation. */
export type RequestMode = "call" | "expression" | "body";

export interface Request {
  mode: RequestMode;
  /** The function name (call) or the code (evaluation). */
  target: string;
  /** JSON text: the arguments (call) or `[names, values]` of the bindings (evaluation). */
  payload: string;
}

/** The program's sources as a list of copies; throws TypeError when one has no code. */
export function normaliseSources(sources: string | ProgramSource[]): ProgramSource[] {
  const list = typeof sources === "string" ? [{ code: sources }] : sources;
  for (const s of list) {
    if (typeof s?.code !== "string") throw new TypeError("Every program source needs its code as a string");
  }
  return list.map((s) => ({ ...s }));
}

export function normaliseHostFunctions(hostFunctions: HostFunctions | undefined): HostFunctionTable {
  const out: HostFunctionTable = new Map();
  for (const [path, spec] of Object.entries(hostFunctions ?? {})) {
    if (!IDENTIFIER_PATH.test(path) || path.split(".").some((p) => RESERVED.has(p))) {
      throw new TypeError(`Invalid host function path: ${path}`);
    }
    const s = spec as HostFunctionSpec;
    out.set(path, typeof s === "function" ? { fn: s, sync: false } : { fn: s.fn, sync: s.sync === true });
  }
  return out;
}

export function programHash(sources: ProgramSource[], hostFns: Map<string, { sync: boolean }>): string {
  const h = createHash("sha256");
  for (const s of sources) {
    h.update(`${s.filename ?? ""}\u0000${s.code.length}\u0000`);
    h.update(s.code);
  }
  for (const [path, { sync }] of [...hostFns].sort(([a], [b]) => (a < b ? -1 : 1)))
    h.update(`\u0001${path}:${sync}`);
  return h.digest("hex");
}

/** The request of `program.call(name, args)`; throws SandboxError("argument"). */
export function callRequest(name: string, args: unknown[], maxBytes: number, programKey: string): Request {
  if (!IDENTIFIER_PATH.test(name)) {
    throw new SandboxError("argument", "The function name must be an identifier or a dotted path");
  }
  return { mode: "call", target: name, payload: toJsonText(args, "The arguments", maxBytes, programKey) };
}

/** The request of `program.evaluate(code, bindings, options)`; throws SandboxError("argument"). */
export function evaluateRequest(
  code: string,
  bindings: Record<string, unknown>,
  options: EvaluateOptions,
  maxBytes: number,
  programKey: string,
): Request {
  const kind = options.kind ?? "expression";
  if (kind !== "expression" && kind !== "body") {
    throw new SandboxError("argument", `Unknown evaluation kind ${String(kind)}`);
  }
  if (typeof code !== "string") throw new SandboxError("argument", "The code must be a string");
  const names = Object.keys(bindings);
  for (const n of names) {
    if (!IDENTIFIER.test(n) || RESERVED.has(n)) {
      throw new SandboxError("argument", `Invalid binding name: ${n}`);
    }
  }
  const payload = toJsonText([names, Object.values(bindings)], "The bindings", maxBytes, programKey);
  return { mode: kind, target: code, payload };
}

/** The value of the isolate's answer (answers.ts), or the SandboxError it stands for. */
export function decodeAnswer(answer: string, maxResultBytes: number, programKey: string): unknown {
  const parts = answerParts(answer);
  if (parts.kind === "value") {
    if (parts.json === undefined) return undefined;
    if (utf8LengthExceeds(parts.json, maxResultBytes)) {
      throw new SandboxError("result", `The result is larger than ${maxResultBytes} bytes of JSON`, {
        programKey,
      });
    }
    try {
      return JSON.parse(parts.json) as unknown;
    } catch {
      throw new SandboxError("result", "The result is not valid JSON", { programKey });
    }
  }
  if (parts.kind === "error") {
    let name = "Error";
    let message = "unknown error";
    let isResult = false;
    try {
      const parsed = JSON.parse(parts.json) as { name?: unknown; message?: unknown; result?: unknown };
      if (typeof parsed.name === "string") name = parsed.name;
      if (typeof parsed.message === "string") message = parsed.message;
      isResult = parsed.result === true;
    } catch {
      // keep the defaults
    }
    if (isResult) throw new SandboxError("result", `Bad result: ${message}`, { programKey });
    throw new SandboxError("script", `${name}: ${message}`, { programKey, scriptError: { name, message } });
  }
  throw new SandboxError("result", "The sandbox gave an unreadable answer", { programKey });
}

/**
 * The error a caller sees: a timeout always names the caller's own limit
 * (waiting for an isolate, or a limit measured elsewhere, counts against it).
 */
export function callError(e: unknown, timeoutMs: number, programKey: string): unknown {
  if (e instanceof IsolateWaitTimeoutError && e.timeoutMs !== timeoutMs) {
    return new IsolateWaitTimeoutError(timeoutMs, { programKey, cause: e });
  }
  if (e instanceof SandboxTimeoutError && e.timeoutMs !== timeoutMs) {
    return new SandboxTimeoutError(timeoutMs, `The call did not finish within ${timeoutMs} ms`, {
      programKey,
      cause: e,
    });
  }
  return e;
}
