/**
 * The typed AST shared by every query-language parser (filter, order, sysfilter,
 * sysorder) and the types the translators need. Positions are 0-based offsets
 * into the source text; error messages show them 1-based.
 */

/** A reference to an attribute of the resource, as the client wrote it. */
export interface AttrRef {
  name: string;
  pos: number;
}

export interface StringLiteral {
  kind: "string";
  value: string;
  pos: number;
}

export interface NumberLiteral {
  kind: "number";
  value: number;
  /** The number as written (used when a number is compared with a string attribute). */
  text: string;
  pos: number;
}

export interface BooleanLiteral {
  kind: "boolean";
  value: boolean;
  pos: number;
}

export interface NullLiteral {
  kind: "null";
  pos: number;
}

/** `@{name}`: bound from the key's globals at compile time, never pasted as text. */
export interface GlobalRef {
  kind: "global";
  name: string;
  pos: number;
}

export type Literal = StringLiteral | NumberLiteral | BooleanLiteral | NullLiteral | GlobalRef;

/** What every filter node has. */
export interface NodeBase {
  pos: number;
  /**
   * Set by the parsers on the root node: the parameter the text came from
   * ("filter", "sysfilter"), so that compile errors name it.
   */
  source?: string;
}

/** `!=` is normalised to `<>`. */
export type CompareOp = "=" | "<>" | "<" | "<=" | ">" | ">=";

export interface AndNode extends NodeBase {
  type: "and";
  items: FilterNode[];
}

export interface OrNode extends NodeBase {
  type: "or";
  items: FilterNode[];
}

export interface NotNode extends NodeBase {
  type: "not";
  item: FilterNode;
}

/**
 * `attr op value`. `upper` (only produced by the `_uc` sysfilter modifiers) means
 * UPPER(attr) op UPPER(value): a case-insensitive comparison of text.
 */
export interface CompareNode extends NodeBase {
  type: "compare";
  attr: AttrRef;
  op: CompareOp;
  value: Literal;
  upper: boolean;
}

/** `attr [not] like 'pattern'` with `%` (any run) and `_` (one character); `upper` as in CompareNode. */
export interface LikeNode extends NodeBase {
  type: "like";
  attr: AttrRef;
  negated: boolean;
  pattern: StringLiteral;
  upper: boolean;
}

/** `attr [not] in (v1, v2, ...)`. */
export interface InNode extends NodeBase {
  type: "in";
  attr: AttrRef;
  negated: boolean;
  values: Literal[];
}

/** `attr is [not] null`: two-valued; a missing field counts as null. */
export interface IsNullNode extends NodeBase {
  type: "isNull";
  attr: AttrRef;
  negated: boolean;
}

export type FilterNode = AndNode | OrNode | NotNode | CompareNode | LikeNode | InNode | IsNullNode;

/** One key of an ordering. `fold` and `nulls` only come from sysorder modifiers. */
export interface OrderItem {
  attr: AttrRef;
  direction: "asc" | "desc";
  /** `asc_uc` / `desc_uc` ("upper") and `asc_lc` / `desc_lc` ("lower"): case-insensitive ordering. */
  fold?: "upper" | "lower";
  /** `null_first` / `null_last`: where null values go (both ascending). */
  nulls?: "first" | "last";
  /** Set by the parsers: the parameter the text came from ("order", "sysorder"), for messages. */
  source?: string;
}

export type AttributeType = "string" | "number" | "integer" | "boolean" | "date" | "datetime" | "json";

/** What the translators need to know about one attribute a client may name. */
export interface AttributeInfo {
  /** The stored document field (attribute names of custom resources are aliases). */
  field: string;
  type: AttributeType;
  /**
   * How `date` / `datetime` values are stored. "string" (default): `YYYY-MM-DD` for
   * dates, `Date.prototype.toISOString()` (`YYYY-MM-DDTHH:mm:ss.SSSZ`) for date-times,
   * forms that sort correctly as text. "date": a BSON Date.
   */
  storedAs?: "string" | "date";
}

/** Attribute name (as clients write it) → stored field and type. */
export type AttributeSchema = Record<string, AttributeInfo>;

/** The read-only view the compilers take. */
export type QuerySchema = Readonly<AttributeSchema>;

/** A MongoDB query document built only from the allow-listed operators. */
export type MongoQuery = { [key: string]: unknown };

/** One MongoDB sort key: stored field and direction. */
export type SortPair = [field: string, direction: 1 | -1];
