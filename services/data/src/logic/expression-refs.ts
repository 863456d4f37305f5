/**
 * What a rule's JavaScript reads from `row`: the attributes (`row.qty`,
 * `row["qty"]`) and the parent attributes (`row.product.price`). The engine
 * uses this to forward-chain formulas in dependency order, to cascade parent
 * changes to children, and to find cycles when a definition is applied.
 *
 * A small tokenizer skips comments, strings and regular expressions, so text
 * that merely looks like `row.x` does not count. When `row` is used in any
 * other way (passed to a function, iterated, indexed by a computed name) the
 * rule is marked `dynamic`: it may read anything.
 */

export interface RowRefs {
  /** `row.<name>` and `row["<name>"]`: an own attribute or a parent role. */
  names: Set<string>;
  /** `row.<role>.<attr>`: keyed by the first name, the attributes read through it. */
  nested: Map<string, Set<string>>;
  /** First names used other than as `row.<name>.<attr>` (the parent object itself, or an own column). */
  whole: Set<string>;
  /** `row` used in a way this analysis cannot follow. */
  dynamic: boolean;
}

type Token =
  | { kind: "ident"; text: string }
  | { kind: "string"; text: string }
  | { kind: "punct"; text: string }
  | { kind: "other" };

const IDENT_START = /[A-Za-z_$]/;
const IDENT_PART = /[A-Za-z0-9_$]/;
/** Keywords after which a `/` starts a regular expression rather than a division. */
const REGEX_AFTER_WORD = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

/** Tokens of JavaScript source, enough to follow property accesses; never throws. */
export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  /** Template literal nesting: brace depth at which each `${` was opened. */
  const templateStack: number[] = [];
  let braceDepth = 0;
  const regexAllowed = () => {
    const last = tokens[tokens.length - 1];
    if (!last) return true;
    if (last.kind === "ident") return REGEX_AFTER_WORD.has(last.text);
    if (last.kind === "punct") return !/^[)\]}]$/.test(last.text);
    return false;
  };
  const readString = (quote: string): string => {
    let out = "";
    i++;
    while (i < src.length && src[i] !== quote) {
      if (src[i] === "\\") {
        out += src[i + 1] ?? "";
        i += 2;
        continue;
      }
      if (src[i] === "\n") break;
      out += src[i];
      i++;
    }
    i++;
    return out;
  };
  /** Reads template text up to the closing backtick or a `${`; returns true when it stopped at `${`. */
  const readTemplateText = (): boolean => {
    while (i < src.length) {
      if (src[i] === "\\") {
        i += 2;
        continue;
      }
      if (src[i] === "`") {
        i++;
        return false;
      }
      if (src[i] === "$" && src[i + 1] === "{") {
        i += 2;
        return true;
      }
      i++;
    }
    return false;
  };
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "/") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      i = end < 0 ? src.length : end + 2;
      continue;
    }
    if (c === "'" || c === '"') {
      tokens.push({ kind: "string", text: readString(c) });
      continue;
    }
    if (c === "`") {
      i++;
      if (readTemplateText()) {
        templateStack.push(braceDepth);
        braceDepth++;
      }
      tokens.push({ kind: "other" });
      continue;
    }
    if (c === "/" && regexAllowed()) {
      i++;
      let inClass = false;
      while (i < src.length && src[i] !== "\n") {
        if (src[i] === "\\") {
          i += 2;
          continue;
        }
        if (src[i] === "[") inClass = true;
        else if (src[i] === "]") inClass = false;
        else if (src[i] === "/" && !inClass) break;
        i++;
      }
      i++;
      while (i < src.length && IDENT_PART.test(src[i]!)) i++;
      tokens.push({ kind: "other" });
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < src.length && IDENT_PART.test(src[j]!)) j++;
      tokens.push({ kind: "ident", text: src.slice(i, j) });
      i = j;
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1] ?? ""))) {
      let j = i + 1;
      while (j < src.length && /[0-9A-Za-z_.]/.test(src[j]!)) j++;
      tokens.push({ kind: "other" });
      i = j;
      continue;
    }
    if (c === "?" && src[i + 1] === "." && !/[0-9]/.test(src[i + 2] ?? "")) {
      tokens.push({ kind: "punct", text: "." });
      i += 2;
      continue;
    }
    if (c === "{") braceDepth++;
    if (c === "}") {
      braceDepth--;
      if (templateStack.length > 0 && templateStack[templateStack.length - 1] === braceDepth) {
        templateStack.pop();
        i++;
        if (readTemplateText()) {
          templateStack.push(braceDepth);
          braceDepth++;
        }
        tokens.push({ kind: "other" });
        continue;
      }
    }
    tokens.push({ kind: "punct", text: c });
    i++;
  }
  return tokens;
}

/** Reads `name` or `["name"]` at position `at` (just after a `.` or at a `[`); returns the name and the next position. */
function memberAt(tokens: Token[], at: number): { name: string; next: number } | undefined {
  const t = tokens[at];
  const prev = tokens[at - 1];
  if (prev?.kind === "punct" && prev.text === "." && t?.kind === "ident")
    return { name: t.text, next: at + 1 };
  if (t?.kind === "punct" && t.text === "[") {
    const s = tokens[at + 1];
    const close = tokens[at + 2];
    if (s?.kind === "string" && close?.kind === "punct" && close.text === "]") {
      return { name: s.text, next: at + 3 };
    }
  }
  return undefined;
}

/** The reads of `variable` (`row` by default) in `src`. */
export function rowRefs(src: string, variable = "row"): RowRefs {
  const refs: RowRefs = { names: new Set(), nested: new Map(), whole: new Set(), dynamic: false };
  const tokens = tokenize(src);
  const isAssignment = (at: number) => {
    const t = tokens[at];
    const n = tokens[at + 1];
    return (
      t?.kind === "punct" && t.text === "=" && !(n?.kind === "punct" && (n.text === "=" || n.text === ">"))
    );
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== "ident" || t.text !== variable) continue;
    const prev = tokens[i - 1];
    // `x.row` is someone else's property; `{row: 1}` is a key.
    if (prev?.kind === "punct" && prev.text === ".") continue;
    const next = tokens[i + 1];
    if (next?.kind === "punct" && next.text === ":" && prev?.kind === "punct" && /[{,]/.test(prev.text))
      continue;
    const first =
      next?.kind === "punct" && next.text === "." ? memberAt(tokens, i + 2) : memberAt(tokens, i + 1);
    if (!first) {
      refs.dynamic = true;
      continue;
    }
    refs.names.add(first.name);
    const after = tokens[first.next];
    const second =
      after?.kind === "punct" && after.text === "."
        ? memberAt(tokens, first.next + 1)
        : memberAt(tokens, first.next);
    if (second && !isAssignment(second.next)) {
      let set = refs.nested.get(first.name);
      if (!set) {
        set = new Set();
        refs.nested.set(first.name, set);
      }
      set.add(second.name);
    } else {
      refs.whole.add(first.name);
    }
  }
  return refs;
}

/** True when `src` mentions the identifier `name` at all (outside strings and comments). */
export function mentions(src: string, name: string): boolean {
  return tokenize(src).some((t) => t.kind === "ident" && t.text === name);
}
