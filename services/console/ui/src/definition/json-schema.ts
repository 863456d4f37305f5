/**
 * A small JSON Schema (2020-12) walker for the definition editor: what the schema
 * allows at a place in a value (for completion) and where a value breaks it (for
 * inline problems). It knows exactly the keywords the server's generated definition
 * schema uses (KNOWN_KEYWORDS; a unit test checks the served schema uses no other),
 * and interprets no code: the console's policy forbids `eval`, which compiling
 * validators (Ajv) rely on. The server's dry run stays the judge: it also checks
 * what no schema can say (a key column that is not a column, a rule's table).
 */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  description?: string;
  title?: string;
  $schema?: string;
}

/** Every keyword this walker acts on or may ignore safely (annotations). */
export const KNOWN_KEYWORDS = new Set<string>([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "items",
  "enum",
  "const",
  "anyOf",
  "oneOf",
  "$ref",
  "$defs",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems",
  "default",
  "description",
  "title",
  "$schema",
]);

export type PathSegment = string | number;

export interface SchemaProblem {
  path: PathSegment[];
  message: string;
  /** Shown at the property's name rather than its value: an unknown field, one that lacks a field. */
  atKey?: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The schema a `$ref` (`#/$defs/name`, or any local JSON pointer) points at. */
function resolve(root: JsonSchema, schema: JsonSchema): JsonSchema {
  let at = schema;
  for (let hops = 0; at.$ref !== undefined && hops < 32; hops++) {
    const ref: string = at.$ref;
    if (!ref.startsWith("#")) return {};
    let target: unknown = root;
    for (const part of ref.slice(1).split("/").filter(Boolean)) {
      const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
      target = isObject(target) ? target[key] : undefined;
    }
    if (!isObject(target)) return {};
    at = target as JsonSchema;
  }
  return at;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function typeMatches(expected: string, actual: string): boolean {
  return expected === actual || (expected === "number" && actual === "integer");
}

const show = (value: unknown) => JSON.stringify(value);

/**
 * The branches of an `anyOf`/`oneOf` that could describe `value`: those whose `const`
 * properties (a discriminator such as a rule's `type`) all agree with it. Any value
 * but an object: every branch.
 */
function fittingBranches(root: JsonSchema, branches: JsonSchema[], value: unknown): JsonSchema[] {
  if (!isObject(value)) return branches;
  return branches.filter((branch) => {
    const b = resolve(root, branch);
    return Object.entries(b.properties ?? {}).every(([name, p]) => {
      const prop = resolve(root, p);
      if (!("const" in prop)) return true;
      // A discriminator the branch requires must be there; one it may leave out (a resource's `type`) may be absent.
      return name in value ? value[name] === prop.const : !b.required?.includes(name);
    });
  });
}

/** Why `value` breaks `schema` (nothing when it fits), each problem at its path. */
export function schemaProblems(root: JsonSchema, value: unknown): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  check(root, root, value, [], problems);
  return problems;
}

function check(
  root: JsonSchema,
  given: JsonSchema,
  value: unknown,
  path: PathSegment[],
  out: SchemaProblem[],
) {
  const schema = resolve(root, given);
  const union = schema.anyOf ?? schema.oneOf;
  if (union) {
    checkUnion(root, union, value, path, out);
    return;
  }
  const actual = typeOf(value);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, actual))) {
      out.push({ path, message: `must be ${types.map(article).join(" or ")}, not ${article(actual)}` });
      return;
    }
  }
  if ("const" in schema && value !== schema.const) {
    out.push({ path, message: `must be ${show(schema.const)}` });
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    out.push({ path, message: `must be one of ${schema.enum.map(show).join(", ")}` });
    return;
  }
  if (typeof value === "string") checkString(schema, value, path, out);
  if (typeof value === "number") checkNumber(schema, value, path, out);
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      out.push({ path, message: `must have at least ${schema.minItems} item(s)` });
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      out.push({ path, message: `must have at most ${schema.maxItems} item(s)` });
    const items = schema.items;
    if (items) value.forEach((item, i) => void check(root, items, item, [...path, i], out));
  }
  if (isObject(value)) checkObject(root, schema, value, path, out);
}

function checkUnion(
  root: JsonSchema,
  union: JsonSchema[],
  value: unknown,
  path: PathSegment[],
  out: SchemaProblem[],
) {
  const fitting = fittingBranches(root, union, value);
  if (fitting.length === 0) {
    // An object whose discriminator names no branch: say which values it may take.
    const named = discriminator(root, union);
    if (named && isObject(value)) {
      out.push({
        path: [...path, named.name],
        message: `must be one of ${named.values.map(show).join(", ")}`,
      });
      return;
    }
  }
  let best: SchemaProblem[] | undefined;
  for (const branch of fitting.length ? fitting : union) {
    const problems: SchemaProblem[] = [];
    check(root, branch, value, path, problems);
    if (problems.length === 0) return;
    if (!best || problems.length < best.length) best = problems;
  }
  if (fitting.length === 1 && best) out.push(...best);
  else out.push({ path, message: describeUnion(root, union) });
}

/** The property whose `const` tells the branches apart (a rule's `type`), with its values. */
function discriminator(
  root: JsonSchema,
  union: JsonSchema[],
): { name: string; values: unknown[] } | undefined {
  const first = resolve(root, union[0] ?? {});
  for (const name of Object.keys(first.properties ?? {})) {
    const values = union.map((b) => resolve(root, resolve(root, b).properties?.[name] ?? {}));
    if (values.every((v) => "const" in v)) return { name, values: values.map((v) => v.const) };
  }
  return undefined;
}

function describeUnion(root: JsonSchema, union: JsonSchema[]): string {
  const kinds = union.map((b) => {
    const s = resolve(root, b);
    return "const" in s
      ? show(s.const)
      : article(Array.isArray(s.type) ? s.type.join(" or ") : (s.type ?? "value"));
  });
  return `must be ${[...new Set(kinds)].join(" or ")}`;
}

function checkString(schema: JsonSchema, value: string, path: PathSegment[], out: SchemaProblem[]) {
  const length = [...value].length;
  if (schema.minLength !== undefined && length < schema.minLength)
    out.push({
      path,
      message:
        schema.minLength === 1 ? "must not be empty" : `must have at least ${schema.minLength} characters`,
    });
  if (schema.maxLength !== undefined && length > schema.maxLength)
    out.push({ path, message: `must have at most ${schema.maxLength} characters` });
  if (schema.pattern !== undefined && !matches(schema.pattern, value))
    out.push({ path, message: `must match ${schema.pattern}` });
}

function checkNumber(schema: JsonSchema, value: number, path: PathSegment[], out: SchemaProblem[]) {
  if (schema.minimum !== undefined && value < schema.minimum)
    out.push({ path, message: `must be at least ${schema.minimum}` });
  if (schema.maximum !== undefined && value > schema.maximum)
    out.push({ path, message: `must be at most ${schema.maximum}` });
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum)
    out.push({ path, message: `must be greater than ${schema.exclusiveMinimum}` });
  if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum)
    out.push({ path, message: `must be less than ${schema.exclusiveMaximum}` });
}

function checkObject(
  root: JsonSchema,
  schema: JsonSchema,
  value: Record<string, unknown>,
  path: PathSegment[],
  out: SchemaProblem[],
) {
  for (const name of schema.required ?? []) {
    if (!(name in value)) out.push({ path, message: `needs '${name}'`, atKey: true });
  }
  for (const [name, item] of Object.entries(value)) {
    const at = [...path, name];
    if (schema.propertyNames) {
      const nameProblems: SchemaProblem[] = [];
      check(root, schema.propertyNames, name, at, nameProblems);
      for (const p of nameProblems) out.push({ path: at, message: `the name ${p.message}`, atKey: true });
    }
    const known = schema.properties?.[name];
    if (known) check(root, known, item, at, out);
    else if (schema.additionalProperties === false)
      out.push({ path: at, message: `unknown field '${name}'`, atKey: true });
    else if (isObject(schema.additionalProperties)) check(root, schema.additionalProperties, item, at, out);
  }
}

const patterns = new Map<string, RegExp | undefined>();
function matches(pattern: string, text: string): boolean {
  if (!patterns.has(pattern)) {
    try {
      patterns.set(pattern, new RegExp(pattern, "u"));
    } catch {
      patterns.set(pattern, undefined);
    }
  }
  const re = patterns.get(pattern);
  return re === undefined || re.test(text);
}

function article(type: string): string {
  if (type === "null") return "null";
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** What completion offers at a place: property names (with what each takes) and values. */
export interface PropertyOffer {
  name: string;
  /** What the property takes, in a word or two (`string`, `one of …`, `object`). */
  detail: string;
  description: string | undefined;
  required: boolean;
}

/**
 * The schemas that describe the value at `path` of `document` (several where a union
 * has not been decided yet). `document` is the value as far as it parses, used to
 * choose between a union's branches (a rule's `type`).
 */
export function schemasAt(root: JsonSchema, document: unknown, path: PathSegment[]): JsonSchema[] {
  let current: { schema: JsonSchema; value: unknown }[] = [{ schema: root, value: document }];
  for (const segment of path) {
    const next: { schema: JsonSchema; value: unknown }[] = [];
    for (const { schema, value } of current) {
      for (const s of expand(root, schema, value)) {
        const child = childSchema(s, segment);
        const childValue =
          isObject(value) && typeof segment === "string"
            ? value[segment]
            : Array.isArray(value) && typeof segment === "number"
              ? value[segment]
              : undefined;
        if (child) next.push({ schema: child, value: childValue });
      }
    }
    current = next;
  }
  return current.flatMap(({ schema, value }) => expand(root, schema, value));
}

/** A schema with its `$ref` resolved and its union split into the branches that fit `value`. */
function expand(root: JsonSchema, given: JsonSchema, value: unknown): JsonSchema[] {
  const schema = resolve(root, given);
  const union = schema.anyOf ?? schema.oneOf;
  if (!union) return [schema];
  // No branch fits yet (a rule without its `type`): every branch may be meant.
  const fitting = fittingBranches(root, union, value);
  return (fitting.length ? fitting : union).flatMap((b) => expand(root, b, value));
}

function childSchema(schema: JsonSchema, segment: PathSegment): JsonSchema | undefined {
  if (typeof segment === "number") return schema.items;
  const known = schema.properties?.[segment];
  if (known) return known;
  return typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
}

/** The properties an object at `path` may have, in the schema's order. */
export function propertiesAt(root: JsonSchema, document: unknown, path: PathSegment[]): PropertyOffer[] {
  const offers = new Map<string, PropertyOffer>();
  for (const schema of schemasAt(root, document, path)) {
    for (const [name, p] of Object.entries(schema.properties ?? {})) {
      if (offers.has(name)) continue;
      const prop = resolve(root, p);
      offers.set(name, {
        name,
        detail: summary(root, prop),
        description: prop.description,
        required: schema.required?.includes(name) ?? false,
      });
    }
  }
  return [...offers.values()];
}

/** The values the schema names at `path` (enum and const members, true and false). */
export function valuesAt(root: JsonSchema, document: unknown, path: PathSegment[]): unknown[] {
  const values: unknown[] = [];
  const add = (v: unknown) => {
    if (!values.some((known) => show(known) === show(v))) values.push(v);
  };
  const visit = (schema: JsonSchema, depth: number) => {
    const s = resolve(root, schema);
    for (const branch of s.anyOf ?? s.oneOf ?? []) if (depth < 8) visit(branch, depth + 1);
    if ("const" in s) add(s.const);
    for (const v of s.enum ?? []) add(v);
    if (s.type === "boolean") {
      add(true);
      add(false);
    }
  };
  // The value being typed must not rule its own union branch out (a rule's `type`): it is left out.
  for (const schema of schemasAt(root, withoutLast(document, path), path)) visit(schema, 0);
  return values;
}

/** The document without the value at `path`, so that a half-typed value does not rule its own branch out. */
function withoutLast(document: unknown, path: PathSegment[]): unknown {
  if (path.length === 0) return document;
  const copy = structuredClone(document);
  let holder: unknown = copy;
  for (const segment of path.slice(0, -1)) {
    holder =
      isObject(holder) || Array.isArray(holder)
        ? (holder as Record<string, unknown>)[segment as string]
        : undefined;
  }
  const last = path.at(-1);
  if (isObject(holder) && typeof last === "string") delete holder[last];
  return copy;
}

function summary(root: JsonSchema, schema: JsonSchema): string {
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map((b) => summary(root, resolve(root, b))).join(" | ");
  if ("const" in schema) return show(schema.const);
  if (schema.enum) return schema.enum.map(show).join(" | ");
  if (schema.type === "object" && schema.additionalProperties && !schema.properties) return "map";
  if (schema.type === "array" && schema.items) {
    const item = resolve(root, schema.items);
    return `list of ${item.enum ? "values" : Array.isArray(item.type) ? item.type.join("/") : (item.type ?? "values")}`;
  }
  return Array.isArray(schema.type) ? schema.type.join(" | ") : (schema.type ?? "any value");
}
