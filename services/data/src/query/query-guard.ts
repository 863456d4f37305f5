/**
 * Defence in depth: checks that a compiled query uses only allow-listed operators,
 * only schema fields as keys, and only plain values (string, number, boolean, null,
 * Date, RegExp) as operands. A violation is a bug in the translator, not a client
 * error, so it throws a plain Error (reported as 500).
 */
import type { MongoQuery } from "./ast.ts";

export const LOGICAL_OPERATORS = new Set(["$and", "$or"]);
export const FIELD_OPERATORS = new Set([
  "$eq",
  "$ne",
  "$lt",
  "$lte",
  "$gt",
  "$gte",
  "$in",
  "$nin",
  "$regex",
  "$options",
]);

export function assertAllowedQuery(query: MongoQuery, fields: ReadonlySet<string>): void {
  checkQuery(query, fields);
}

function fail(what: string): never {
  throw new Error(`compiled filter is not allow-listed: ${what}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

function checkQuery(query: unknown, fields: ReadonlySet<string>): void {
  if (!isPlainObject(query)) fail("a query must be a plain object");
  for (const [key, value] of Object.entries(query)) {
    if (LOGICAL_OPERATORS.has(key)) {
      if (!Array.isArray(value) || value.length === 0) fail(`${key} needs a non-empty array`);
      for (const item of value) checkQuery(item, fields);
    } else if (key.startsWith("$") || !(fields.has(key) || key === "_id")) {
      fail(`key ${JSON.stringify(key)}`);
    } else {
      checkCondition(key, value);
    }
  }
}

function checkCondition(field: string, condition: unknown): void {
  if (!isPlainObject(condition)) fail(`field ${field} must have an operator object`);
  for (const [op, operand] of Object.entries(condition)) {
    if (!FIELD_OPERATORS.has(op)) fail(`operator ${JSON.stringify(op)} on ${field}`);
    if (op === "$in" || op === "$nin") {
      if (!Array.isArray(operand)) fail(`${op} needs an array`);
      for (const v of operand) checkValue(v, op);
    } else if (op === "$regex" || op === "$options") {
      if (typeof operand !== "string") fail(`${op} needs a string`);
      if (op === "$options" && !/^i?$/.test(operand)) fail(`$options ${JSON.stringify(operand)}`);
    } else {
      checkValue(operand, op);
    }
  }
}

function checkValue(value: unknown, op: string): void {
  if (value === null || value instanceof Date || value instanceof RegExp) return;
  if (typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number" && Number.isFinite(value)) return;
  fail(`operand of ${op} is not a plain value`);
}
