/**
 * SQL LIKE patterns → anchored regular expressions, in two dialects made by one walk over the
 * pattern, so that they mean the same:
 *
 * - `source`, for the store: what MongoDB (PCRE) and FerretDB (Go RE2) read, and what JavaScript
 *   keeps verbatim in RegExp.source (the driver serialises the RegExp that `$nin` carries).
 *   `%` → `[\s\S]*`, `_` → `[\s\S]` (newlines count as characters, no flags needed); a run of
 *   wildcards with k `_` and at least one `%` becomes k `[\s\S]` and one `[\s\S]*`. Anchors
 *   `^` … `\z` (PCRE's `$` would also match before a final newline). Every other ASCII
 *   punctuation character is escaped with a backslash, so regex metacharacters in user text are
 *   literal; ASCII control characters become `\xHH` and U+2028/U+2029 `\x{2028}` / `\x{2029}`
 *   (JavaScript would otherwise rewrite them in RegExp.source); everything else stands for itself.
 * - `local`, for this process (a filter evaluated on a change-feed row: query/conditions.ts): the
 *   same pattern as a JavaScript RegExp in Unicode mode (`u`: `[\s\S]` is one code point, as in
 *   RE2 and PCRE's UTF mode; with `i`, Unicode simple case folding, as RE2's `(?i)`), anchored
 *   `^` … `$` (JavaScript's `$` without the `m` flag is the end of the text only).
 */

const ANY = "[\\s\\S]";

export interface LikeRegex {
  /** The store's regular expression source, e.g. `^abc[\s\S]*\z`. */
  source: string;
  /** The same expression for a JavaScript RegExp with the `u` flag, e.g. `^abc[\s\S]*$`. */
  local: string;
  /** Number of `%` runs: each is one unbounded repetition in the regex. */
  wildcards: number;
}

/** Escapes one code point so that it matches itself literally in the store's dialect. */
function literal(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code === 0x2028 || code === 0x2029) return `\\x{${code.toString(16)}}`;
  if (code < 0x80 && /[!-/:-@[-`{-~]/.test(ch)) return `\\${ch}`;
  return ch;
}

/** Escapes one code point for a JavaScript RegExp in Unicode mode (only syntax characters may be escaped there). */
function localLiteral(ch: string): string {
  return /[\^$\\.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}

/** Translates a LIKE pattern (case-sensitivity is the caller's choice of flags). */
export function likeToRegex(pattern: string): LikeRegex {
  let source = "^";
  let local = "^";
  let wildcards = 0;
  let singles = 0;
  let percent = false;
  const flush = () => {
    const run = ANY.repeat(singles) + (percent ? `${ANY}*` : "");
    source += run;
    local += run;
    if (percent) wildcards++;
    singles = 0;
    percent = false;
  };
  for (const ch of pattern) {
    if (ch === "%") percent = true;
    else if (ch === "_") singles++;
    else {
      flush();
      source += literal(ch);
      local += localLiteral(ch);
    }
  }
  flush();
  return { source: `${source}\\z`, local: `${local}$`, wildcards };
}

/** Anchored regexes matching exactly `text` (for case-insensitive equality), in both dialects. */
export function exactRegex(text: string): Omit<LikeRegex, "wildcards"> {
  let source = "^";
  let local = "^";
  for (const ch of text) {
    source += literal(ch);
    local += localLiteral(ch);
  }
  return { source: `${source}\\z`, local: `${local}$` };
}
