/**
 * SQL LIKE patterns → anchored regular expressions that mean the same on every
 * engine Tessera meets: MongoDB (PCRE), FerretDB (Go RE2) and JavaScript (whose
 * RegExp is what the driver serialises for `$nin`).
 *
 * - `%` → `[\s\S]*`, `_` → `[\s\S]` (so newlines count as characters, no flags needed);
 *   a run of wildcards with k `_` and at least one `%` becomes k `[\s\S]` and one `[\s\S]*`.
 * - Anchors `^` … `\z`: PCRE's `$` would also match before a final newline.
 * - Every other ASCII punctuation character is escaped with a backslash, so regex
 *   metacharacters in user text are literal; ASCII control characters become
 *   `\xHH` and U+2028/U+2029 become `\x{2028}` / `\x{2029}` (JavaScript would otherwise
 *   rewrite them in RegExp.source); everything else stands for itself.
 */

const ANY = "[\\s\\S]";

export interface LikeRegex {
  /** The regular expression source, e.g. `^abc[\s\S]*\z`. */
  source: string;
  /** Number of `%` runs: each is one unbounded repetition in the regex. */
  wildcards: number;
}

/** Escapes one code point so that it matches itself literally. */
function literal(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code === 0x2028 || code === 0x2029) return `\\x{${code.toString(16)}}`;
  if (code < 0x80 && /[!-/:-@[-`{-~]/.test(ch)) return `\\${ch}`;
  return ch;
}

/** Translates a LIKE pattern (case-sensitivity is the caller's choice of flags). */
export function likeToRegex(pattern: string): LikeRegex {
  let source = "^";
  let wildcards = 0;
  let singles = 0;
  let percent = false;
  const flush = () => {
    source += ANY.repeat(singles);
    if (percent) {
      source += `${ANY}*`;
      wildcards++;
    }
    singles = 0;
    percent = false;
  };
  for (const ch of pattern) {
    if (ch === "%") percent = true;
    else if (ch === "_") singles++;
    else {
      flush();
      source += literal(ch);
    }
  }
  flush();
  return { source: `${source}\\z`, wildcards };
}

/** An anchored regex matching exactly `text` (for case-insensitive equality). */
export function exactRegex(text: string): string {
  let source = "^";
  for (const ch of text) source += literal(ch);
  return `${source}\\z`;
}
