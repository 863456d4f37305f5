/** Helpers for the sandbox tests. */
import { expect } from "chai";
import { SandboxError, type SandboxLogger } from "../../../services/data/src/sandbox/index.ts";

export interface LogEntry {
  level: "debug" | "info" | "warn" | "error";
  obj: Record<string, unknown>;
  msg: string | undefined;
}

/** A logger that keeps every entry, for assertions (e.g. that no password is ever logged). */
export function memoryLogger(): SandboxLogger & { entries: LogEntry[]; text(): string } {
  const entries: LogEntry[] = [];
  const at =
    (level: LogEntry["level"]) =>
    (obj: object, msg?: string): void => {
      entries.push({ level, obj: obj as Record<string, unknown>, msg });
    };
  return {
    entries,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    text: () => entries.map((e) => `${e.level} ${JSON.stringify(e.obj)} ${e.msg ?? ""}`).join("\n"),
  };
}

/** Runs `fn` and returns its outcome and how long it took. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = performance.now();
  try {
    const value = await fn();
    return { ms: performance.now() - started, value };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Resolves once `condition()` holds, checking every 20 ms; rejects after `ms` (a guard against a
 * condition that never comes, far beyond any loaded machine, not a time the test depends on).
 */
export async function until(condition: () => boolean, what = "condition", ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not met within ${ms} ms`);
    await sleep(20);
  }
}

/** Resolves after everything already queued (promise reactions, I/O callbacks) has run. */
export function turnOfEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The SandboxError `p` rejects with (fails the test when it resolves or rejects with something else). */
export async function rejection(p: Promise<unknown>): Promise<SandboxError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(SandboxError);
    return e as SandboxError;
  }
  throw new Error("expected a rejection");
}
