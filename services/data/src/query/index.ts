/**
 * The query language of the data service (docs/filters.md).
 *
 * Parse client text into a typed AST, then compile the AST against the resource's
 * attributes into a MongoDB query / sort built only from allow-listed operators:
 *
 * ```ts
 * const ast = parseFilter("balance > 100 and region = @{region}");
 * const query = compileFilter(ast, schema, key.globals);     // { $and: [...] }
 * const { query, test } = compileCondition(ast, schema, key.globals); // and its test on a row
 * const sort = [...compileOrder(parseOrder("name desc"), schema), ["_id", 1]];
 * ```
 *
 * Every parse or compile problem is an ApiError 400/4002 whose message names the
 * parameter, the 1-based position and what is wrong; a referenced global with no
 * value is 403/4031. Repeated parameters are combined by the caller with an `and`
 * node (`{ type: "and", items, pos: 0 }`).
 */
export type {
  AndNode,
  AttributeInfo,
  AttributeSchema,
  AttributeType,
  AttrRef,
  BooleanLiteral,
  CompareNode,
  CompareOp,
  FilterNode,
  GlobalRef,
  InNode,
  IsNullNode,
  LikeNode,
  Literal,
  MongoQuery,
  NotNode,
  NullLiteral,
  NumberLiteral,
  OrderItem,
  OrNode,
  QuerySchema,
  SortPair,
  StringLiteral,
} from "./ast.ts";
export type { Condition, RowFields, RowTest } from "./conditions.ts";
export { parseFilter } from "./filter-parser.ts";
export { LIMITS } from "./input-limits.ts";
export { compileOrder } from "./order-compiler.ts";
export { parseOrder } from "./order-parser.ts";
export { printFilter, printName, printOrder, printString } from "./printer.ts";
export { parseSysfilter } from "./sysfilter-parser.ts";
export { parseSysorder } from "./sysorder-parser.ts";
export { type CompileOptions, compileCondition, compileFilter, matchNothing } from "./translator.ts";
