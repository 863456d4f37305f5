/**
 * Tokenizer of the filter and order languages (docs/filters.md).
 *
 * - Keywords (and, or, not, like, in, is, null, true, false) are case-insensitive
 *   bare words; a double-quoted name is never a keyword.
 * - Strings: single quotes, `''` stands for one quote. Names: bare
 *   `[A-Za-z_][A-Za-z0-9_]*` or double-quoted with `""` for one quote.
 * - Numbers: `-?(digits[.digits]|.digits)([eE][+-]?digits)?`.
 * - `@{global}`: global names are `[A-Za-z_][A-Za-z0-9_.-]*`.
 */
import { LIMITS } from "./input-limits.ts";
import { badQuery, type QueryLabel, show } from "./query-error.ts";

export const KEYWORDS = ["and", "or", "not", "like", "in", "is", "null", "true", "false"] as const;
export type Keyword = (typeof KEYWORDS)[number];

export type OpText = "=" | "<>" | "!=" | "<" | "<=" | ">" | ">=";

export type Token =
  | { kind: "name"; name: string; quoted: boolean; pos: number; end: number }
  | { kind: "keyword"; word: Keyword; pos: number; end: number }
  | { kind: "string"; value: string; pos: number; end: number }
  | { kind: "number"; value: number; text: string; pos: number; end: number }
  | { kind: "global"; name: string; pos: number; end: number }
  | { kind: "op"; op: OpText; pos: number; end: number }
  | { kind: "(" | ")" | ","; pos: number; end: number }
  | { kind: "eof"; pos: number; end: number };

const BARE_NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;
const GLOBAL_NAME = /[A-Za-z_][A-Za-z0-9_.-]*/y;
const IDENT_CHAR = /[A-Za-z0-9_.]/;
const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

export function isKeyword(word: string): word is Keyword {
  return (KEYWORDS as readonly string[]).includes(word);
}

/** A bare name that can be written without double quotes. */
export function isBareName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !isKeyword(name.toLowerCase());
}

/** Matches a number at `pos`; returns its text or undefined. */
export function matchNumber(text: string, pos: number): string | undefined {
  NUMBER.lastIndex = pos;
  return NUMBER.exec(text)?.[0];
}

/**
 * Rejects text that is too long or not well-formed Unicode (lone surrogates),
 * before any scanning.
 */
export function checkText(text: string, label: QueryLabel): void {
  if (typeof text !== "string") throw badQuery(label, undefined, "expected text");
  if (text.length > LIMITS.maxTextLength) {
    throw badQuery(label, undefined, `longer than the limit of ${LIMITS.maxTextLength} characters`);
  }
  if (!text.isWellFormed()) throw badQuery(label, undefined, "contains invalid Unicode (a lone surrogate)");
}

/** Parses a number token's text; rejects values that overflow to Infinity. */
export function numberValue(text: string, pos: number, label: QueryLabel): number {
  const value = Number(text);
  if (!Number.isFinite(value)) throw badQuery(label, pos, `number ${show(text)} is out of range`);
  return Object.is(value, -0) ? 0 : value;
}

/** Splits `text` into tokens, ending with one `eof` token. */
export function tokenize(text: string, label: QueryLabel): Token[] {
  checkText(text, label);
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (WHITESPACE.has(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === "(" || c === ")" || c === ",") {
      tokens.push({ kind: c, pos: start, end: i + 1 });
      i++;
    } else if (c === "'") {
      const { value, end } = scanQuoted(text, start, "'", label, "string");
      tokens.push({ kind: "string", value, pos: start, end });
      i = end;
    } else if (c === '"') {
      const { value, end } = scanQuoted(text, start, '"', label, "quoted name");
      if (value === "") throw badQuery(label, start, "empty quoted name");
      tokens.push({ kind: "name", name: value, quoted: true, pos: start, end });
      i = end;
    } else if (c === "@") {
      const global = scanGlobal(text, start, label);
      tokens.push(global);
      i = global.end;
    } else if (c === "=" || c === "<" || c === ">" || c === "!") {
      const two = text.slice(i, i + 2);
      let op: OpText;
      if (two === "<>" || two === "!=" || two === "<=" || two === ">=") op = two;
      else if (c === "!") throw badQuery(label, start, "unexpected '!' (did you mean '!='?)");
      else op = c;
      tokens.push({ kind: "op", op, pos: start, end: start + op.length });
      i += op.length;
    } else if (/[0-9.-]/.test(c)) {
      const num = matchNumber(text, i);
      if (num === undefined) throw badQuery(label, start, `unexpected ${show(c)}`);
      const end = i + num.length;
      if (end < text.length && IDENT_CHAR.test(text.charAt(end))) {
        throw badQuery(label, start, `malformed number ${show(text.slice(start, end + 1))}`);
      }
      tokens.push({ kind: "number", value: numberValue(num, start, label), text: num, pos: start, end });
      i = end;
    } else {
      BARE_NAME.lastIndex = i;
      const word = BARE_NAME.exec(text)?.[0];
      if (word === undefined) throw badQuery(label, start, `unexpected character ${show(charAt(text, i))}`);
      const lower = word.toLowerCase();
      const end = i + word.length;
      if (isKeyword(lower)) tokens.push({ kind: "keyword", word: lower, pos: start, end });
      else tokens.push({ kind: "name", name: word, quoted: false, pos: start, end });
      i = end;
    }
  }
  tokens.push({ kind: "eof", pos: text.length, end: text.length });
  return tokens;
}

/** The whole code point at `i` (so that messages never show half a surrogate pair). */
function charAt(text: string, i: number): string {
  return String.fromCodePoint(text.codePointAt(i) ?? 0);
}

/** Scans a `q`-quoted run where a doubled `q` stands for one `q`. */
function scanQuoted(
  text: string,
  start: number,
  q: string,
  label: QueryLabel,
  what: string,
): { value: string; end: number } {
  let value = "";
  let i = start + 1;
  for (;;) {
    const next = text.indexOf(q, i);
    if (next < 0) throw badQuery(label, start, `unterminated ${what} (missing closing ${q})`);
    value += text.slice(i, next);
    if (text[next + 1] === q) {
      value += q;
      i = next + 2;
    } else {
      return { value, end: next + 1 };
    }
  }
}

function scanGlobal(text: string, start: number, label: QueryLabel): Token {
  if (text[start + 1] !== "{") throw badQuery(label, start, "'@' must start a global such as @{name}");
  GLOBAL_NAME.lastIndex = start + 2;
  const name = GLOBAL_NAME.exec(text)?.[0];
  if (name === undefined) throw badQuery(label, start, "expected a global name after '@{'");
  const close = start + 2 + name.length;
  if (text[close] !== "}") {
    throw badQuery(label, close, `expected '}' to close global @{${name}`);
  }
  return { kind: "global", name, pos: start, end: close + 1 };
}

/** How a token looks in an error message. */
export function describe(token: Token): string {
  switch (token.kind) {
    case "eof":
      return "end of text";
    case "name":
      return `name ${show(token.name)}`;
    case "keyword":
      return `'${token.word}'`;
    case "string":
      return `string ${show(token.value)}`;
    case "number":
      return `number ${token.text}`;
    case "global":
      return `global @{${token.name}}`;
    case "op":
      return `'${token.op}'`;
    default:
      return `'${token.kind}'`;
  }
}
