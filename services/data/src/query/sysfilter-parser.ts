/**
 * Parser of the structured LAC filter (docs/filters.md):
 *
 *   sysfilter := op[modifier] "(" attr ":" value ("," attr ":" value)* ")"
 *   op        := equal | notequal | less | lessequal | greater | greaterequal | like | notlike
 *   modifier  := _or | _uc | _uc_or
 *   value     := 'text' | "text" (JavaScript escapes) | number | true | false | null
 *
 * Produces the same AST as the filter parser: the expressions of one call are
 * ANDed (`_or`: ORed); `_uc` marks each comparison `upper` (UPPER(attr) op UPPER(value));
 * `equal(x: null)` is `x is null`, `notequal(x: null)` is `x is not null`.
 */
import type { AttrRef, CompareOp, FilterNode, Literal } from "./ast.ts";
import { LIMITS } from "./input-limits.ts";
import { badQuery, type QueryLabel, show } from "./query-error.ts";
import { describeS, type SToken, tokenizeStructured } from "./structured-tokenizer.ts";
import { TokenCursor } from "./token-cursor.ts";

const OPS = {
  equal: "=",
  notequal: "<>",
  less: "<",
  lessequal: "<=",
  greater: ">",
  greaterequal: ">=",
  like: "like",
  notlike: "notlike",
} as const satisfies Record<string, CompareOp | "like" | "notlike">;

type OpName = keyof typeof OPS;

const OP_WORD = /^(equal|notequal|less|lessequal|greater|greaterequal|like|notlike)(_or|_uc|_uc_or)?$/;

export function parseSysfilter(text: string, label: QueryLabel = "sysfilter"): FilterNode {
  const tokens = new TokenCursor(tokenizeStructured(text, label));
  const expect = (kind: SToken["kind"], what: string): SToken => {
    const token = tokens.peek();
    if (token.kind !== kind) throw badQuery(label, token.pos, `expected ${what}, found ${describeS(token)}`);
    tokens.next();
    return token;
  };

  const opToken = tokens.next();
  if (opToken.kind === "eof") throw badQuery(label, undefined, "the expression is empty");
  if (opToken.kind !== "name") {
    throw badQuery(
      label,
      opToken.pos,
      `expected an operator such as equal(...), found ${describeS(opToken)}`,
    );
  }
  const match = OP_WORD.exec(opToken.name.toLowerCase());
  if (!match) {
    throw badQuery(
      label,
      opToken.pos,
      `unknown operator ${show(opToken.name)}; use one of ${Object.keys(OPS).join(", ")}, ` +
        "optionally followed by _or, _uc or _uc_or",
    );
  }
  const op = match[1] as OpName;
  const modifier = match[2] ?? "";
  const upper = modifier.includes("_uc");
  const combine = modifier.includes("_or") ? "or" : "and";

  expect("(", `'(' after ${opToken.name}`);
  const items: FilterNode[] = [];
  for (;;) {
    const attrToken = tokens.next();
    if (attrToken.kind !== "name" && attrToken.kind !== "string") {
      throw badQuery(label, attrToken.pos, `expected an attribute name, found ${describeS(attrToken)}`);
    }
    const attr: AttrRef = {
      name: attrToken.kind === "name" ? attrToken.name : attrToken.value,
      pos: attrToken.pos,
    };
    expect(":", `':' after attribute ${show(attr.name)}`);
    const value = literal(tokens.next(), label);
    items.push(expression(op, upper, attr, value, label));
    if (items.length > LIMITS.maxInList) {
      throw badQuery(label, attrToken.pos, `more than ${LIMITS.maxInList} expressions`);
    }
    const sep = tokens.next();
    if (sep.kind === ")") break;
    if (sep.kind !== ",") throw badQuery(label, sep.pos, `expected ',' or ')', found ${describeS(sep)}`);
  }
  expect("eof", "the end after ')' (repeat the sysfilter parameter to combine calls)");
  const [first] = items;
  const root: FilterNode = first && items.length === 1 ? first : { type: combine, items, pos: opToken.pos };
  return { ...root, source: label };
}

function literal(token: SToken, label: QueryLabel): Literal {
  if (token.kind === "string") return { kind: "string", value: token.value, pos: token.pos };
  if (token.kind === "number")
    return { kind: "number", value: token.value, text: token.text, pos: token.pos };
  if (token.kind === "name") {
    const word = token.name.toLowerCase();
    if (word === "true" || word === "false")
      return { kind: "boolean", value: word === "true", pos: token.pos };
    if (word === "null") return { kind: "null", pos: token.pos };
  }
  throw badQuery(
    label,
    token.pos,
    `expected a value (a quoted string, a number, true, false or null), found ${describeS(token)}`,
  );
}

function expression(
  op: OpName,
  upper: boolean,
  attr: AttrRef,
  value: Literal,
  label: QueryLabel,
): FilterNode {
  const pos = attr.pos;
  const sqlOp = OPS[op];
  if (sqlOp === "like" || sqlOp === "notlike") {
    if (value.kind !== "string") throw badQuery(label, value.pos, `${op} needs a quoted string pattern`);
    return { type: "like", attr, negated: sqlOp === "notlike", pattern: value, upper, pos };
  }
  if (value.kind === "null" && (sqlOp === "=" || sqlOp === "<>")) {
    return { type: "isNull", attr, negated: sqlOp === "<>", pos };
  }
  return { type: "compare", attr, op: sqlOp, value, upper, pos };
}
