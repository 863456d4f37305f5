/**
 * A value of an attribute as an editor holds it (`text`, and whether it is null) and back:
 * each column type has its own form — numbers, `true`/`false`, `YYYY-MM-DD`, a UTC
 * date-time without its zone (what a `datetime-local` input holds), JSON text.
 */
export interface Draft {
  text: string;
  isNull: boolean;
}

export type Typed = { ok: true; value: unknown } | { ok: false; message: string };

/** The type to edit a value as when no definition names it (a JavaScript resource). */
export function guessedType(value: unknown): string {
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "object" && value !== null) return "json";
  return "string";
}

export function draftOf(type: string, value: unknown): Draft {
  if (value === null || value === undefined) return { text: "", isNull: true };
  if (type === "json") return { text: JSON.stringify(value, null, 2), isNull: false };
  if (type === "datetime" && typeof value === "string") {
    // Stored as ISO 8601 in UTC: the editor shows UTC, without the zone it says in its label.
    const d = new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(value) ? value : `${value}Z`);
    return { text: Number.isNaN(d.getTime()) ? value : d.toISOString().slice(0, 19), isNull: false };
  }
  if (typeof value === "object") return { text: JSON.stringify(value), isNull: false };
  return { text: String(value), isNull: false };
}

export function typedValue(type: string, draft: Draft): Typed {
  if (draft.isNull) return { ok: true, value: null };
  const { text } = draft;
  switch (type) {
    case "number":
    case "integer": {
      const n = text.trim() === "" ? Number.NaN : Number(text);
      if (!Number.isFinite(n)) return { ok: false, message: `is not a number` };
      if (type === "integer" && !Number.isSafeInteger(n)) return { ok: false, message: "is not an integer" };
      return { ok: true, value: n };
    }
    case "boolean":
      return text === "true" || text === "false"
        ? { ok: true, value: text === "true" }
        : { ok: false, message: "is neither true nor false" };
    case "datetime":
      return /(Z|[+-]\d\d:?\d\d)$/i.test(text) || text === ""
        ? { ok: true, value: text }
        : { ok: true, value: `${text}Z` };
    case "json":
      try {
        return { ok: true, value: JSON.parse(text) };
      } catch (err) {
        return { ok: false, message: `is not JSON: ${(err as Error).message}` };
      }
    default:
      return { ok: true, value: text };
  }
}

/** Whether a draft differs from the value it was made from. */
export function draftChanged(type: string, value: unknown, draft: Draft): boolean {
  const before = draftOf(type, value);
  return before.isNull !== draft.isNull || (!draft.isNull && before.text !== draft.text);
}
