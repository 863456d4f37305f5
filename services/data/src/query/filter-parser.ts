/**
 * Recursive-descent parser of the filter language (docs/filters.md):
 *
 *   expr    := term ( "or" term )*           term := factor ( "and" factor )*
 *   factor  := "not" factor | "(" expr ")" | cmp
 *   cmp     := name op value | name ["not"] "like" string
 *            | name ["not"] "in" "(" value ("," value)* ")" | name "is" ["not"] "null"
 *   op      := "=" | "<>" | "!=" | "<" | "<=" | ">" | ">="
 *   value   := 'string' | number | true | false | null | @{global}
 *
 * Precedence: not > and > or. Limits: LIMITS.maxDepth nesting of "(" and "not",
 * LIMITS.maxInList values per in-list, LIMITS.maxTextLength characters.
 */
import type { AttrRef, CompareOp, FilterNode, Literal, StringLiteral } from "./ast.ts";
import { LIMITS } from "./input-limits.ts";
import { badQuery, type QueryLabel } from "./query-error.ts";
import { TokenCursor } from "./token-cursor.ts";
import { describe, type Keyword, type Token, tokenize } from "./tokenizer.ts";

/** Parses filter text into an AST; throws errors.badFilter (400/4002) with a position. */
export function parseFilter(text: string, label: QueryLabel = "filter"): FilterNode {
  const parser = new FilterParser(tokenize(text, label), label);
  if (parser.peek().kind === "eof") throw badQuery(label, undefined, "the expression is empty");
  const node = parser.expr(0);
  const rest = parser.peek();
  if (rest.kind !== "eof") {
    const hint = rest.kind === ")" ? "unbalanced ')'" : `unexpected ${describe(rest)}`;
    throw badQuery(label, rest.pos, `${hint}; expected 'and', 'or' or the end of the filter`);
  }
  return { ...node, source: label };
}

class FilterParser {
  private readonly tokens: TokenCursor<Token>;
  private readonly label: QueryLabel;

  constructor(tokens: Token[], label: QueryLabel) {
    this.tokens = new TokenCursor(tokens);
    this.label = label;
  }

  peek(): Token {
    return this.tokens.peek();
  }

  private next(): Token {
    return this.tokens.next();
  }

  private isKeyword(word: Keyword): boolean {
    const token = this.peek();
    return token.kind === "keyword" && token.word === word;
  }

  private fail(token: Token, expected: string): never {
    throw badQuery(this.label, token.pos, `expected ${expected}, found ${describe(token)}`);
  }

  expr(depth: number): FilterNode {
    const pos = this.peek().pos;
    const items = [this.term(depth)];
    while (this.isKeyword("or")) {
      this.next();
      items.push(this.term(depth));
    }
    const [first] = items;
    return first && items.length === 1 ? first : { type: "or", items, pos };
  }

  private term(depth: number): FilterNode {
    const pos = this.peek().pos;
    const items = [this.factor(depth)];
    while (this.isKeyword("and")) {
      this.next();
      items.push(this.factor(depth));
    }
    const [first] = items;
    return first && items.length === 1 ? first : { type: "and", items, pos };
  }

  private factor(depth: number): FilterNode {
    const token = this.peek();
    if (token.kind === "keyword" && token.word === "not") {
      this.enter(depth, token);
      this.next();
      return { type: "not", item: this.factor(depth + 1), pos: token.pos };
    }
    if (token.kind === "(") {
      this.enter(depth, token);
      this.next();
      const inner = this.expr(depth + 1);
      const close = this.peek();
      if (close.kind !== ")") this.fail(close, `')' to close the '(' at position ${token.pos + 1}`);
      this.next();
      return inner;
    }
    return this.comparison();
  }

  private enter(depth: number, token: Token): void {
    if (depth >= LIMITS.maxDepth) {
      throw badQuery(this.label, token.pos, `nesting deeper than the limit of ${LIMITS.maxDepth}`);
    }
  }

  private comparison(): FilterNode {
    const token = this.next();
    if (token.kind !== "name") {
      if (token.kind === "keyword") {
        this.fail(token, `an attribute name (write "${token.word}" in double quotes if it is an attribute)`);
      }
      this.fail(token, "an attribute name");
    }
    const attr: AttrRef = { name: token.name, pos: token.pos };
    const pos = token.pos;
    const after = this.next();
    if (after.kind === "op") {
      const op: CompareOp = after.op === "!=" ? "<>" : after.op;
      return { type: "compare", attr, op, value: this.value(`'${after.op}'`), upper: false, pos };
    }
    if (after.kind === "keyword") {
      let negated = false;
      let word: Token = after;
      if (after.word === "not") {
        negated = true;
        word = this.next();
        if (word.kind !== "keyword" || (word.word !== "like" && word.word !== "in")) {
          this.fail(word, "'like' or 'in' after 'not'");
        }
      }
      if (word.kind === "keyword" && word.word === "like") {
        return { type: "like", attr, negated, pattern: this.likePattern(), upper: false, pos };
      }
      if (word.kind === "keyword" && word.word === "in") {
        return { type: "in", attr, negated, values: this.inList(), pos };
      }
      if (word.kind === "keyword" && word.word === "is") {
        const notOrNull = this.next();
        let isNegated = false;
        let last = notOrNull;
        if (notOrNull.kind === "keyword" && notOrNull.word === "not") {
          isNegated = true;
          last = this.next();
        }
        if (last.kind !== "keyword" || last.word !== "null") {
          this.fail(last, isNegated ? "'null' after 'is not'" : "'null' or 'not null' after 'is'");
        }
        return { type: "isNull", attr, negated: isNegated, pos };
      }
    }
    return this.fail(after, `a comparison (=, <>, !=, <, <=, >, >=, like, in, is) after ${describe(token)}`);
  }

  private likePattern(): StringLiteral {
    const token = this.next();
    if (token.kind !== "string") this.fail(token, "a quoted string pattern after 'like'");
    return { kind: "string", value: token.value, pos: token.pos };
  }

  private inList(): Literal[] {
    const open = this.next();
    if (open.kind !== "(") this.fail(open, "'(' after 'in'");
    const values = [this.value("'('")];
    for (;;) {
      const token = this.next();
      if (token.kind === ")") return values;
      if (token.kind !== ",") this.fail(token, "',' or ')' in the in-list");
      if (values.length >= LIMITS.maxInList) {
        throw badQuery(this.label, token.pos, `in-list longer than the limit of ${LIMITS.maxInList} values`);
      }
      values.push(this.value("','"));
    }
  }

  private value(after: string): Literal {
    const token = this.next();
    switch (token.kind) {
      case "string":
        return { kind: "string", value: token.value, pos: token.pos };
      case "number":
        return { kind: "number", value: token.value, text: token.text, pos: token.pos };
      case "global":
        return { kind: "global", name: token.name, pos: token.pos };
      case "keyword":
        if (token.word === "true" || token.word === "false") {
          return { kind: "boolean", value: token.word === "true", pos: token.pos };
        }
        if (token.word === "null") return { kind: "null", pos: token.pos };
        break;
      case "name":
        throw badQuery(
          this.label,
          token.pos,
          `expected a value after ${after}, found ${describe(token)}: attributes cannot be compared with ` +
            "each other; write text in single quotes",
        );
    }
    return this.fail(token, `a value after ${after}`);
  }
}
