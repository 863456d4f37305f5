/**
 * Parser of the structured LAC ordering (docs/filters.md):
 *
 *   sysorder := "(" item ("," item)* ")"      (the parentheses may be left out)
 *   item     := attr [":" (asc | desc | asc_uc | desc_uc | asc_lc | desc_lc | null_first | null_last)]
 *
 * `null_first` / `null_last` order ascending with nulls first / last.
 */
import type { OrderItem } from "./ast.ts";
import { LIMITS } from "./input-limits.ts";
import { badQuery, type QueryLabel, show } from "./query-error.ts";
import { describeS, tokenizeStructured } from "./structured-tokenizer.ts";
import { TokenCursor } from "./token-cursor.ts";

const MODIFIERS: Record<string, Omit<OrderItem, "attr">> = {
  asc: { direction: "asc" },
  desc: { direction: "desc" },
  asc_uc: { direction: "asc", fold: "upper" },
  desc_uc: { direction: "desc", fold: "upper" },
  asc_lc: { direction: "asc", fold: "lower" },
  desc_lc: { direction: "desc", fold: "lower" },
  null_first: { direction: "asc", nulls: "first" },
  null_last: { direction: "asc", nulls: "last" },
};

export function parseSysorder(text: string, label: QueryLabel = "sysorder"): OrderItem[] {
  const tokens = new TokenCursor(tokenizeStructured(text, label));
  if (tokens.peek().kind === "eof") throw badQuery(label, undefined, "the ordering is empty");
  const parenthesised = tokens.peek().kind === "(";
  if (parenthesised) tokens.next();
  const items: OrderItem[] = [];
  for (;;) {
    const nameToken = tokens.next();
    if (nameToken.kind !== "name" && nameToken.kind !== "string") {
      throw badQuery(label, nameToken.pos, `expected an attribute name, found ${describeS(nameToken)}`);
    }
    if (items.length >= LIMITS.maxOrderKeys) {
      throw badQuery(label, nameToken.pos, `more than ${LIMITS.maxOrderKeys} order keys`);
    }
    const name = nameToken.kind === "name" ? nameToken.name : nameToken.value;
    let item: OrderItem = { attr: { name, pos: nameToken.pos }, direction: "asc", source: label };
    let next = tokens.next();
    if (next.kind === ":") {
      const mod = tokens.next();
      const key = mod.kind === "name" ? mod.name.toLowerCase() : "";
      const known = Object.hasOwn(MODIFIERS, key) ? MODIFIERS[key] : undefined;
      if (!known) {
        const found = mod.kind === "name" ? `unknown modifier ${show(mod.name)}` : `found ${describeS(mod)}`;
        throw badQuery(label, mod.pos, `${found}; expected one of ${Object.keys(MODIFIERS).join(", ")}`);
      }
      item = { ...item, ...known };
      next = tokens.next();
    }
    items.push(item);
    if (next.kind === ",") continue;
    if (parenthesised) {
      if (next.kind !== ")") throw badQuery(label, next.pos, `expected ',' or ')', found ${describeS(next)}`);
      next = tokens.next();
    }
    if (next.kind !== "eof") throw badQuery(label, next.pos, `expected the end, found ${describeS(next)}`);
    return items;
  }
}
