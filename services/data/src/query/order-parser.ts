/**
 * Parser of the `order` parameter: `attr [asc|desc] (, attr [asc|desc])*`.
 * Attribute names are bare or double-quoted as in filters; `asc` / `desc` are
 * case-insensitive. A bare keyword (e.g. `in`) is accepted as a name here, since
 * nothing else can stand in that place.
 */
import type { OrderItem } from "./ast.ts";
import { LIMITS } from "./input-limits.ts";
import { badQuery, type QueryLabel } from "./query-error.ts";
import { TokenCursor } from "./token-cursor.ts";
import { describe, tokenize } from "./tokenizer.ts";

export function parseOrder(text: string, label: QueryLabel = "order"): OrderItem[] {
  const tokens = new TokenCursor(tokenize(text, label));
  if (tokens.peek().kind === "eof") throw badQuery(label, undefined, "the ordering is empty");
  const items: OrderItem[] = [];
  for (;;) {
    const nameToken = tokens.next();
    let name: string;
    if (nameToken.kind === "name") name = nameToken.name;
    else if (nameToken.kind === "keyword") name = nameToken.word;
    else throw badQuery(label, nameToken.pos, `expected an attribute name, found ${describe(nameToken)}`);
    if (items.length >= LIMITS.maxOrderKeys) {
      throw badQuery(label, nameToken.pos, `more than ${LIMITS.maxOrderKeys} order keys`);
    }
    const item: OrderItem = { attr: { name, pos: nameToken.pos }, direction: "asc", source: label };
    items.push(item);
    let next = tokens.next();
    if (next.kind === "name" && !next.quoted && /^(asc|desc)$/i.test(next.name)) {
      item.direction = next.name.toLowerCase() as "asc" | "desc";
      next = tokens.next();
    }
    if (next.kind === "eof") return items;
    if (next.kind !== ",") {
      throw badQuery(label, next.pos, `expected 'asc', 'desc', ',' or the end, found ${describe(next)}`);
    }
  }
}
