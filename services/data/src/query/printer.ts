/**
 * AST → filter / order text that parses back to the same AST (up to positions).
 * Useful for building links that carry a filter. Nodes with `upper` (from `_uc`
 * sysfilters) have no filter-language form and are refused.
 */
import type { FilterNode, Literal, OrderItem } from "./ast.ts";
import { isBareName, matchNumber } from "./tokenizer.ts";

export function printName(name: string): string {
  return isBareName(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

export function printString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

export function printLiteral(literal: Literal): string {
  switch (literal.kind) {
    case "string":
      return printString(literal.value);
    case "number": {
      if (!Number.isFinite(literal.value)) throw new Error(`cannot print number ${literal.value}`);
      const text = matchNumber(literal.text, 0) === literal.text ? literal.text : String(literal.value);
      return text;
    }
    case "boolean":
      return literal.value ? "true" : "false";
    case "null":
      return "null";
    case "global":
      if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(literal.name))
        throw new Error(`cannot print global ${literal.name}`);
      return `@{${literal.name}}`;
  }
}

export function printFilter(node: FilterNode): string {
  switch (node.type) {
    case "and":
      return node.items
        .map((item) =>
          item.type === "and" || item.type === "or" ? `(${printFilter(item)})` : printFilter(item),
        )
        .join(" and ");
    case "or":
      return node.items
        .map((item) => (item.type === "or" ? `(${printFilter(item)})` : printFilter(item)))
        .join(" or ");
    case "not": {
      const inner = printFilter(node.item);
      return node.item.type === "and" || node.item.type === "or" ? `not (${inner})` : `not ${inner}`;
    }
    case "compare":
      if (node.upper) throw new Error("a case-insensitive (_uc) comparison has no filter-language form");
      return `${printName(node.attr.name)} ${node.op} ${printLiteral(node.value)}`;
    case "like":
      if (node.upper) throw new Error("a case-insensitive (_uc) like has no filter-language form");
      return `${printName(node.attr.name)} ${node.negated ? "not like" : "like"} ${printString(node.pattern.value)}`;
    case "in":
      return `${printName(node.attr.name)} ${node.negated ? "not in" : "in"} (${node.values.map(printLiteral).join(", ")})`;
    case "isNull":
      return `${printName(node.attr.name)} is ${node.negated ? "not null" : "null"}`;
  }
}

export function printOrder(items: readonly OrderItem[]): string {
  return items
    .map((item) => {
      if (item.fold || item.nulls) throw new Error("sysorder modifiers have no order-language form");
      const name = /^(asc|desc)$/i.test(item.attr.name) ? `"${item.attr.name}"` : printName(item.attr.name);
      return `${name} ${item.direction}`;
    })
    .join(", ");
}
