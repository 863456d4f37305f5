/** Host-side checks of the data that crosses the isolate boundary (always JSON text). */
import { SandboxError } from "./errors.ts";

/**
 * JSON text of `value`, which must be plain data: no functions, symbols,
 * BigInts or cycles, at most `maxBytes` bytes of UTF-8. Dates become ISO strings
 * (as JSON.stringify does).
 */
export function toJsonText(value: unknown, what: string, maxBytes: number, programKey?: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_key, v: unknown) => {
      const t = typeof v;
      if (t === "function" || t === "symbol" || t === "bigint") {
        throw new SandboxError("argument", `${what} contains a ${t}; only plain JSON data is allowed`, {
          programKey,
        });
      }
      return v;
    });
  } catch (e) {
    if (e instanceof SandboxError) throw e;
    throw new SandboxError("argument", `${what} is not plain JSON data (cyclic?)`, { programKey, cause: e });
  }
  if (text === undefined) text = "null";
  if (text.length > maxBytes || Buffer.byteLength(text) > maxBytes) {
    throw new SandboxError("argument", `${what} is larger than ${maxBytes} bytes of JSON`, { programKey });
  }
  return text;
}

/** Bytes of UTF-8 in `s`, stopping early once it is known to exceed `cap`. */
export function utf8LengthExceeds(s: string, cap: number): boolean {
  if (s.length > cap) return true;
  if (s.length * 3 <= cap) return false;
  return Buffer.byteLength(s) > cap;
}
