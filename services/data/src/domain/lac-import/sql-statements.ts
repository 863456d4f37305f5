/**
 * An SQL script cut into its statements, each with the line it starts on, so
 * that one statement the parser cannot read is reported by its line and the
 * others are still read. Statements end at `;` outside quotes (`'…'`, `"…"`,
 * `` `…` ``, `[…]`) and comments (`-- …`, `/* … *\/`), or at a line holding only
 * `GO` (SQL Server's batch separator).
 */

export interface SqlStatement {
  text: string;
  /** 1-based line of the statement's first character. */
  line: number;
}

const CLOSERS: Record<string, string> = { "'": "'", '"': '"', "`": "`", "[": "]" };

export function splitStatements(script: string): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let start = 0;
  let line = 1;
  let startLine = 1;
  const push = (end: number) => {
    const raw = script.slice(start, end);
    const lead = raw.length - raw.trimStart().length;
    const text = raw.trim();
    if (text !== "" && !/^(--[^\n]*\n?\s*|\/\*[\s\S]*?\*\/\s*)*$/.test(text)) {
      statements.push({ text, line: startLine + countLines(raw.slice(0, lead)) });
    }
  };
  let i = 0;
  while (i < script.length) {
    const c = script[i] as string;
    if (c === "\n") {
      line++;
      const rest = /^[ \t]*GO[ \t]*(?=\r?\n|$)/i.exec(script.slice(i + 1));
      if (rest) {
        push(i);
        i += 1 + rest[0].length;
        start = i;
        startLine = line;
        continue;
      }
      i++;
      continue;
    }
    if (c === "-" && script[i + 1] === "-") {
      const end = script.indexOf("\n", i);
      i = end === -1 ? script.length : end;
      continue;
    }
    if (c === "/" && script[i + 1] === "*") {
      const end = script.indexOf("*/", i + 2);
      const stop = end === -1 ? script.length : end + 2;
      line += countLines(script.slice(i, stop));
      i = stop;
      continue;
    }
    const closer = CLOSERS[c];
    if (closer) {
      let j = i + 1;
      while (j < script.length) {
        if (script[j] === closer) {
          if (script[j + 1] === closer && closer !== "]") {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      line += countLines(script.slice(i, j));
      i = j + 1;
      continue;
    }
    if (c === ";") {
      push(i);
      start = i + 1;
      startLine = line;
    }
    i++;
  }
  push(script.length);
  return statements;
}

function countLines(text: string): number {
  let n = 0;
  for (const c of text) if (c === "\n") n++;
  return n;
}

/** A statement's text from its first word on (comments in front of it left out). */
export function statementWords(text: string): string {
  return text.replace(/^(\s*(--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/))*\s*/, "");
}
