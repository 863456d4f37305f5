/**
 * Conditions on a row, each in two forms made by the same constructor call: the query document
 * the store runs, and the same condition evaluated on a row in this process (for rows the store
 * does not read: change-feed events, feed/live-view.ts and hooks/subscription-rules.ts). Each
 * constructor emits one of the store's operators and evaluates it by the store's rules for that
 * operator (store-values.ts), so the two forms cannot drift apart: a filter compiled once
 * (translator.ts) is one meaning, whoever applies it.
 */
import type { MongoQuery } from "./ast.ts";
import type { LikeRegex } from "./like-regex.ts";
import {
  equalsOperand,
  inOperands,
  matchesPattern,
  type RangeOperator,
  satisfiesRange,
} from "./store-values.ts";

/** A row as the store holds it: its fields by stored name. */
export type RowFields = Readonly<Record<string, unknown>>;

/** Whether a row satisfies a condition. */
export type RowTest = (row: RowFields) => boolean;

/** A condition: the store's query and the in-process test of the same. */
export interface Condition {
  query: MongoQuery;
  test: RowTest;
}

/** A value an operator may take: a plain value, or a regular expression inside `$nin`. */
type Operand = string | number | boolean | Date | null;

/** `{field: {$eq: value}}`. */
export function equal(field: string, value: Operand): Condition {
  return { query: { [field]: { $eq: value } }, test: (row) => equalsOperand(row[field], value) };
}

/** `{field: {$ne: value}}`. */
export function notEqual(field: string, value: Operand): Condition {
  return { query: { [field]: { $ne: value } }, test: (row) => !equalsOperand(row[field], value) };
}

/** `{field: {$lt: value}}` and the other ordering operators. */
export function range(field: string, op: RangeOperator, value: Operand): Condition {
  return { query: { [field]: { [op]: value } }, test: (row) => satisfiesRange(row[field], op, value) };
}

/** `{field: {$in: values}}`. */
export function oneOf(field: string, values: readonly Operand[]): Condition {
  return { query: { [field]: { $in: [...values] } }, test: (row) => inOperands(row[field], values) };
}

/** `{field: {$nin: values}}`. */
export function noneOf(field: string, values: readonly Operand[]): Condition {
  return { query: { [field]: { $nin: [...values] } }, test: (row) => !inOperands(row[field], values) };
}

/** A pattern in both dialects (like-regex.ts) with its flags. */
export interface Pattern {
  regex: Pick<LikeRegex, "source" | "local">;
  caseInsensitive: boolean;
}

function localRegExp(pattern: Pattern): RegExp {
  return new RegExp(pattern.regex.local, pattern.caseInsensitive ? "iu" : "u");
}

/** `{field: {$regex: source[, $options: "i"]}}`: the string matches. */
export function matching(field: string, pattern: Pattern): Condition {
  const { source } = pattern.regex;
  const local = localRegExp(pattern);
  return {
    query: { [field]: pattern.caseInsensitive ? { $regex: source, $options: "i" } : { $regex: source } },
    test: (row) => matchesPattern(row[field], local),
  };
}

/**
 * `{field: {$nin: [/source/, null]}}`: the field has a value and it is not a string that matches
 * (a RegExp inside `$nin` means "does not match"; its source is exactly `source`: like-regex.ts
 * only emits text that JavaScript keeps verbatim in RegExp.source).
 */
export function notMatchingNorNull(field: string, pattern: Pattern): Condition {
  const stored = new RegExp(pattern.regex.source, pattern.caseInsensitive ? "i" : "");
  const local = localRegExp(pattern);
  return {
    query: { [field]: { $nin: [stored, null] } },
    test: (row) => {
      const value = row[field];
      return !equalsOperand(value, null) && !matchesPattern(value, local);
    },
  };
}

/** A query that matches no row, from allow-listed operators only. */
export function nothing(): Condition {
  return { query: { _id: { $in: [] } }, test: () => false };
}

/** Conjunction; flattens nested `$and`. */
export function allOf(parts: readonly Condition[]): Condition {
  const [first] = parts;
  if (first && parts.length === 1) return first;
  const items = parts.flatMap((p) => (isOnly(p.query, "$and") ? (p.query.$and as MongoQuery[]) : [p.query]));
  const tests = parts.map((p) => p.test);
  return { query: { $and: items }, test: (row) => tests.every((t) => t(row)) };
}

/** Disjunction; flattens nested `$or`. */
export function anyOf(parts: readonly Condition[]): Condition {
  const [first] = parts;
  if (first && parts.length === 1) return first;
  const items = parts.flatMap((p) => (isOnly(p.query, "$or") ? (p.query.$or as MongoQuery[]) : [p.query]));
  const tests = parts.map((p) => p.test);
  return { query: { $or: items }, test: (row) => tests.some((t) => t(row)) };
}

function isOnly(query: MongoQuery, key: "$and" | "$or"): boolean {
  const keys = Object.keys(query);
  return keys.length === 1 && keys[0] === key;
}
