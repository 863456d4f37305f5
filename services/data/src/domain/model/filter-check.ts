/**
 * Checks a filter text of a project definition (role row filters, resource
 * filters) when the definition is applied: it must parse and name only
 * attributes that exist. Globals are unknown then, so they are checked as nulls.
 * A filter that names a lost attribute (one whose definition has a problem of
 * its own) is only checked to parse.
 */
import { ApiError } from "../../../../../shared/errors.ts";
import {
  type AttributeSchema,
  compileFilter,
  type FilterNode,
  type Literal,
  parseFilter,
} from "../../query/index.ts";
import type { FilterChecker } from "./project-model.ts";

function withoutGlobals(node: FilterNode): FilterNode {
  const lit = (l: Literal): Literal => (l.kind === "global" ? { kind: "null", pos: l.pos } : l);
  switch (node.type) {
    case "and":
    case "or":
      return { ...node, items: node.items.map(withoutGlobals) };
    case "not":
      return { ...node, item: withoutGlobals(node.item) };
    case "compare":
      return { ...node, value: lit(node.value) };
    case "in":
      return { ...node, values: node.values.map(lit) };
    default:
      return node;
  }
}

function namesAttribute(node: FilterNode, names: ReadonlySet<string>): boolean {
  switch (node.type) {
    case "and":
    case "or":
      return node.items.some((item) => namesAttribute(item, names));
    case "not":
      return namesAttribute(node.item, names);
    default:
      return names.has(node.attr.name);
  }
}

export const checkFilterText: FilterChecker = (text, attributes, lost = new Set()) => {
  const schema: AttributeSchema = {};
  for (const a of attributes) schema[a.name] = { field: a.name, type: a.type };
  try {
    const filter = parseFilter(text);
    if (!namesAttribute(filter, lost)) compileFilter(withoutGlobals(filter), schema, {});
    return null;
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 400) return err.message;
    throw err;
  }
};
