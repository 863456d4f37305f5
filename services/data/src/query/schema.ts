/** Looks attribute names up in a QuerySchema (own properties only: `constructor`, `__proto__` are not attributes). */
import type { AttributeInfo, AttrRef, QuerySchema } from "./ast.ts";
import { badQuery, type QueryLabel, show } from "./query-error.ts";

export function resolveAttribute(schema: QuerySchema, attr: AttrRef, label: QueryLabel): AttributeInfo {
  const info = Object.hasOwn(schema, attr.name) ? schema[attr.name] : undefined;
  if (info) {
    checkField(info.field);
    return info;
  }
  const lower = attr.name.toLowerCase();
  const similar = Object.keys(schema).find((name) => name.toLowerCase() === lower);
  const hint =
    similar === undefined ? "" : ` (attribute names are case-sensitive: did you mean ${show(similar)}?)`;
  throw badQuery(label, attr.pos, `unknown attribute ${show(attr.name)}${hint}`);
}

/** The schema is server configuration, but a field that could read as an operator is refused anyway. */
function checkField(field: string): void {
  if (typeof field !== "string" || field === "" || field.startsWith("$") || field.includes("\0")) {
    throw new Error(`query schema maps an attribute to an unusable field name ${JSON.stringify(field)}`);
  }
}
