/**
 * Stored and piped state is parsed, not believed: a record read back from Redis or MongoDB (or
 * handed over by another process) goes through the schema of what it may be, so that a record of
 * another shape fails here, by name, rather than somewhere later as a missing field. A schema reads
 * the shapes earlier releases stored too (optional fields, defaults). The error names the record
 * and the fields, never the text: stored records can hold secrets and rows.
 */
import type { z } from "zod";

/** The value `json` (already parsed) read through `schema`; `what` names it in the error. */
export function readStored<T>(schema: z.ZodType<T>, what: string, json: unknown): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new Error(`a stored ${what} does not read: ${issuesOf(parsed.error)}`);
  return parsed.data;
}

/** The fields a value failed its schema on, and why (never their values). */
export function issuesOf(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(the record)"} ${i.message}`).join("; ");
}

/** The JSON text `text` parsed and read through `schema`; `what` names it in the error. */
export function readStoredJson<T>(schema: z.ZodType<T>, what: string, text: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`a stored ${what} is not JSON`);
  }
  return readStored(schema, what, json);
}
