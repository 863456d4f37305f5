/**
 * Secret fields of a project definition are write-only: once stored, their
 * values are never answered — not by the project, not by its revisions, not in
 * a diff — but stand as SECRET_MASK. A definition sent with SECRET_MASK in a
 * secret field keeps the value stored there (so a definition read, edited and
 * sent back, as the console's editor does, changes no secret); a new value
 * replaces it (that is how a secret is rotated).
 *
 * Which fields are secret is marked here, once, by their path in the
 * definition (`*`: any name): every value of a custom provider's `config`
 * (its API secrets, and whatever else it is configured with). A new kind of
 * secret field is marked by adding its path to SECRET_FIELDS.
 */
import { isDeepStrictEqual } from "node:util";
import { present } from "../../../../../shared/present.ts";
import { jsonPath, type Problem } from "./problems.ts";

export const SECRET_FIELDS: readonly (readonly string[])[] = [["authentication", "config", "*"]];

/** What a secret field's value is answered as, and sent back as to keep it. */
export const SECRET_MASK = "********";
/** A secret field's new side in a diff, when its value changed (the diff says which, never what). */
const CHANGED_MASK = `${SECRET_MASK} (changed)`;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The paths of the secret fields that hold a value in `definition`. */
function secretPaths(definition: unknown): string[][] {
  const found: string[][] = [];
  const walk = (value: unknown, pattern: readonly string[], at: string[]) => {
    if (pattern.length === 0) {
      if (value !== undefined) found.push(at);
      return;
    }
    if (!isObject(value)) return;
    const [head, ...rest] = pattern as [string, ...string[]];
    const names = head === "*" ? Object.keys(value) : Object.hasOwn(value, head) ? [head] : [];
    for (const name of names) walk(value[name], rest, [...at, name]);
  };
  for (const pattern of SECRET_FIELDS) walk(definition, pattern, []);
  return found;
}

function valueAt(definition: unknown, path: readonly string[]): unknown {
  let value = definition;
  for (const name of path) {
    if (!isObject(value) || !Object.hasOwn(value, name)) return undefined;
    value = value[name];
  }
  return value;
}

/** Sets a value whose parent exists (every path here was found by secretPaths). */
function setAt(definition: unknown, path: readonly string[], value: unknown): void {
  const parent = valueAt(definition, path.slice(0, -1)) as Json;
  parent[present(path.at(-1), "a secret's name")] = value;
}

/** A copy of the definition with each secret value replaced by `change(value)`. */
export function mapSecrets<T>(definition: T, change: (value: unknown) => unknown): T {
  const copy = structuredClone(definition);
  for (const path of secretPaths(copy)) setAt(copy, path, change(valueAt(copy, path)));
  return copy;
}

/** A copy of the definition with every secret value replaced by SECRET_MASK: what is answered. */
export function maskSecrets<T>(definition: T): T {
  return mapSecrets(definition, () => SECRET_MASK);
}

/**
 * The definition as sent, with each SECRET_MASK in a secret field replaced by
 * the value stored there; a problem for each mask with nothing stored behind it.
 */
export function restoreSecrets<T>(sent: T, stored: unknown): { definition: T; problems: Problem[] } {
  const definition = structuredClone(sent);
  const problems: Problem[] = [];
  for (const path of secretPaths(definition)) {
    if (valueAt(definition, path) !== SECRET_MASK) continue;
    const kept = valueAt(stored, path);
    if (kept === undefined) {
      problems.push({
        path: jsonPath(path),
        message: `'${SECRET_MASK}' stands for the secret stored here, and none is: send its value`,
      });
    } else {
      setAt(definition, path, structuredClone(kept));
    }
  }
  return { definition, problems };
}

/**
 * Both definitions with their secret values masked for comparing them: equal
 * values as SECRET_MASK on both sides, a changed one as SECRET_MASK before and
 * CHANGED_MASK after — so a diff tells which secret was added, removed or
 * changed and never what it is.
 */
export function maskSecretPair<T>(before: T, after: T): [T, T] {
  const b = structuredClone(before);
  const a = structuredClone(after);
  const paths = new Map([...secretPaths(b), ...secretPaths(a)].map((p) => [JSON.stringify(p), p]));
  for (const path of paths.values()) {
    const old = valueAt(b, path);
    const now = valueAt(a, path);
    if (old !== undefined) setAt(b, path, SECRET_MASK);
    if (now !== undefined) setAt(a, path, isDeepStrictEqual(old, now) ? SECRET_MASK : CHANGED_MASK);
  }
  return [b, a];
}
