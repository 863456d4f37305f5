/**
 * Checks a filter text of a project definition (role row filters, resource
 * filters) when the definition is applied: it must parse and name only
 * attributes that exist. Globals are unknown then, so they are checked as nulls.
 */
import { ApiError } from "../../../../shared/errors.ts";
import {
  type AttributeSchema,
  compileFilter,
  type FilterNode,
  type Literal,
  parseFilter,
} from "../query/index.ts";
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

export const checkFilterText: FilterChecker = (text, attributes) => {
  const schema: AttributeSchema = {};
  for (const a of attributes) schema[a.name] = { field: a.name, type: a.type };
  try {
    compileFilter(withoutGlobals(parseFilter(text)), schema, {});
    return null;
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 400) return err.message;
    throw err;
  }
};
