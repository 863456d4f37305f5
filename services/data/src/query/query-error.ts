/** Builds the 400/4002 errors of the query language with a uniform, positioned message. */
import { type ApiError, errors } from "../../../../shared/errors.ts";

/** Which parameter the text came from; used as the start of every message. */
export type QueryLabel = "filter" | "order" | "sysfilter" | "sysorder" | (string & {});

/** `Invalid filter at position 7: expected a value after '=', found ')'` (position is 1-based). */
export function badQuery(label: QueryLabel, pos: number | undefined, what: string): ApiError {
  const where = pos === undefined ? "" : ` at position ${pos + 1}`;
  return errors.badFilter(`Invalid ${label}${where}: ${what}`);
}

/** Shows a piece of client text in a message: quoted, shortened, control characters escaped. */
export function show(text: string, max = 30): string {
  const chars = Array.from(text); // whole code points, never half a surrogate pair
  const short = chars.length > max ? `${chars.slice(0, max).join("")}…` : text;
  let out = "";
  for (const ch of short) {
    const code = ch.charCodeAt(0);
    out += code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, "0")}` : ch;
  }
  return `'${out}'`;
}
