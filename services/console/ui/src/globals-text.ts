/**
 * Globals (the values of `@{name}` in role row filters) as they are typed: a JSON object,
 * or nothing at all.
 */

/** The globals typed as JSON text: an object, or nothing. */
export function parseGlobals(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error('Globals must be a JSON object, like {"region": "north"}. Nothing was saved.');
  }
  return value as Record<string, unknown>;
}
