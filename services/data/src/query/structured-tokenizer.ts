/**
 * Tokenizer of the structured LAC forms (`sysfilter`, `sysorder`, docs/filters.md
 * "Reading"): bare names, punctuation `( ) , :`, numbers, and strings quoted with
 * ' or " using JavaScript escapes (\n \t \r \b \f \v \0 \xHH \uHHHH \u{H..}, and
 * \<any other character> for that character; octal escapes are refused).
 */
import { badQuery, type QueryLabel, show } from "./query-error.ts";
import { checkText, matchNumber, numberValue } from "./tokenizer.ts";

export type SToken =
  | { kind: "name"; name: string; pos: number }
  | { kind: "string"; value: string; pos: number }
  | { kind: "number"; value: number; text: string; pos: number }
  | { kind: "(" | ")" | "," | ":"; pos: number }
  | { kind: "eof"; pos: number };

const BARE_NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const SIMPLE_ESCAPES: Record<string, string> = {
  n: "\n",
  r: "\r",
  t: "\t",
  b: "\b",
  f: "\f",
  v: "\v",
};

export function tokenizeStructured(text: string, label: QueryLabel): SToken[] {
  checkText(text, label);
  const tokens: SToken[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    const start = i;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (c === "(" || c === ")" || c === "," || c === ":") {
      tokens.push({ kind: c, pos: start });
      i++;
    } else if (c === "'" || c === '"') {
      const { value, end } = scanJsString(text, start, label);
      tokens.push({ kind: "string", value, pos: start });
      i = end;
    } else if (/[0-9.-]/.test(c)) {
      const num = matchNumber(text, i);
      if (num === undefined) throw badQuery(label, start, `unexpected ${show(c)}`);
      const end = i + num.length;
      if (end < text.length && /[A-Za-z0-9_.]/.test(text.charAt(end))) {
        throw badQuery(label, start, `malformed number ${show(text.slice(start, end + 1))}`);
      }
      tokens.push({ kind: "number", value: numberValue(num, start, label), text: num, pos: start });
      i = end;
    } else {
      BARE_NAME.lastIndex = i;
      const word = BARE_NAME.exec(text)?.[0];
      if (word === undefined) {
        throw badQuery(
          label,
          start,
          `unexpected character ${show(String.fromCodePoint(text.codePointAt(i) ?? 0))}`,
        );
      }
      tokens.push({ kind: "name", name: word, pos: start });
      i += word.length;
    }
  }
  tokens.push({ kind: "eof", pos: text.length });
  return tokens;
}

/** Scans a JavaScript string literal starting at `start` (its quote character). */
function scanJsString(text: string, start: number, label: QueryLabel): { value: string; end: number } {
  const quote = text[start];
  let value = "";
  let i = start + 1;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === quote) {
      if (!value.isWellFormed())
        throw badQuery(label, start, "string contains invalid Unicode (a lone surrogate)");
      return { value, end: i + 1 };
    }
    if (c !== "\\") {
      value += c;
      i++;
      continue;
    }
    const e = text[i + 1];
    const escPos = i;
    if (e === undefined) break;
    i += 2;
    if (e in SIMPLE_ESCAPES) {
      value += SIMPLE_ESCAPES[e];
    } else if (e === "0" && !/[0-9]/.test(text[i] ?? "")) {
      value += "\0";
    } else if (/[0-9]/.test(e)) {
      throw badQuery(label, escPos, "octal escapes are not supported in strings");
    } else if (e === "x") {
      const hex = text.slice(i, i + 2);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex))
        throw badQuery(label, escPos, "\\x must be followed by two hex digits");
      value += String.fromCharCode(Number.parseInt(hex, 16));
      i += 2;
    } else if (e === "u") {
      const { char, end } = scanUnicodeEscape(text, i, escPos, label);
      value += char;
      i = end;
    } else if (e === "\r" && text[i] === "\n") {
      i++; // line continuation
    } else if (e === "\n" || e === "\r" || e === "\u2028" || e === "\u2029") {
      // line continuation
    } else {
      value += e;
    }
  }
  throw badQuery(label, start, `unterminated string (missing closing ${quote})`);
}

function scanUnicodeEscape(
  text: string,
  i: number,
  escPos: number,
  label: QueryLabel,
): { char: string; end: number } {
  if (text[i] === "{") {
    const close = text.indexOf("}", i);
    const hex = close < 0 ? "" : text.slice(i + 1, close);
    const code = /^[0-9A-Fa-f]{1,6}$/.test(hex) ? Number.parseInt(hex, 16) : Number.NaN;
    if (!(code <= 0x10ffff)) throw badQuery(label, escPos, "malformed \\u{...} escape");
    return { char: String.fromCodePoint(code), end: close + 1 };
  }
  const hex = text.slice(i, i + 4);
  if (!/^[0-9A-Fa-f]{4}$/.test(hex)) throw badQuery(label, escPos, "\\u must be followed by four hex digits");
  return { char: String.fromCharCode(Number.parseInt(hex, 16)), end: i + 4 };
}

export function describeS(token: SToken): string {
  switch (token.kind) {
    case "eof":
      return "end of text";
    case "name":
      return `name ${show(token.name)}`;
    case "string":
      return `string ${show(token.value)}`;
    case "number":
      return `number ${token.text}`;
    default:
      return `'${token.kind}'`;
  }
}
