/**
 * The checks every JSON request body passes before a handler sees it
 * (docs/errors.md, "Request bodies"): strict UTF-8, at most MAX_JSON_DEPTH levels
 * of nested objects and arrays, no lone surrogate in any property name or string,
 * and no `__proto__` property. Pure functions: json-body.ts reads and answers.
 */

/** Nesting levels of objects and arrays a request body may have (a top-level object is one). */
export const MAX_JSON_DEPTH = 64;

/** Made once: a decode without `{ stream: true }` keeps nothing from one call to the next. */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The bytes as text, or undefined when they are not well-formed UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** True when the JSON text nests objects and arrays deeper than `maxDepth` (strings are skipped). */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** What makes a parsed JSON value unacceptable (undefined: nothing); its nesting is already bounded. */
export function jsonValueProblem(value: unknown): string | undefined {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") {
      if (!item.isWellFormed()) return "A string in the request body holds a lone surrogate";
    } else if (Array.isArray(item)) {
      for (const inner of item) pending.push(inner);
    } else if (typeof item === "object" && item !== null) {
      for (const [name, inner] of Object.entries(item)) {
        if (name === "__proto__") return "The request body has a property named __proto__";
        if (!name.isWellFormed()) return "A property name in the request body holds a lone surrogate";
        pending.push(inner);
      }
    }
  }
  return undefined;
}

/** Parses a request body's bytes: the value, or the problem that refuses it. */
export function parseJsonBytes(bytes: Uint8Array): { value: unknown } | { problem: string } {
  const text = decodeUtf8(bytes);
  if (text === undefined) return { problem: "The request body is not valid UTF-8" };
  if (nestsDeeperThan(text, MAX_JSON_DEPTH))
    return { problem: `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "The request body is not valid JSON" };
  }
  const problem = jsonValueProblem(value);
  return problem === undefined ? { value } : { problem };
}
