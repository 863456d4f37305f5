/**
 * What survives of a project definition that does not parse, so that its
 * semantic problems can be listed in the same answer as its structural ones.
 *
 * A structural problem loses the smallest part of the definition that holds
 * it: a column, a relationship (`parents.<role>`), a table, a resource, a
 * version's events or its libraries list, a role's entry for one table, a
 * role, a rule, a library, or a whole top-level section. Everything else is
 * kept: a table with one badly typed column is still a table, and its other
 * columns are still columns. Unknown fields are dropped without losing
 * anything.
 *
 * The checks that follow consult `LostParts` before reporting a reference as
 * unknown, so a rule reading the badly typed column is not reported again. The
 * checks add to it too: a relationship to a table that does not exist is lost,
 * and so are the references to it.
 */

/** A structural problem as the schema reports it. */
export interface StructuralIssue {
  code: string;
  path: readonly PropertyKey[];
  keys?: readonly string[];
}

const keyOf = (path: readonly PropertyKey[]) => JSON.stringify(path.map(String));

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The value at `path` in a JSON value (own properties only), or undefined. */
export function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** Parts of a definition that could not be taken in; references to them are not reported. */
export class LostParts {
  readonly #units: (readonly PropertyKey[])[] = [];
  readonly #keys = new Set<string>();
  /** The definition as sent: what a lost relationship pointed at can still be read there. */
  readonly #sent: unknown;

  constructor(sent: unknown) {
    this.#sent = sent;
  }

  add(path: readonly PropertyKey[]): void {
    if (this.#keys.has(keyOf(path))) return;
    this.#keys.add(keyOf(path));
    this.#units.push(path);
  }

  /** Is this part, or a part holding it, lost? */
  has(path: readonly PropertyKey[]): boolean {
    for (let n = 1; n <= path.length; n++) if (this.#keys.has(keyOf(path.slice(0, n)))) return true;
    return false;
  }

  /** Is anything at or under `path` lost? */
  hasWithin(path: readonly PropertyKey[]): boolean {
    return this.has(path) || this.#units.some((u) => keyOf(u.slice(0, path.length)) === keyOf(path));
  }

  /** Names of the lost parts directly within `path` (the lost columns of a table). */
  namesWithin(path: readonly PropertyKey[]): string[] {
    return this.#units
      .filter((u) => u.length === path.length + 1 && keyOf(u.slice(0, path.length)) === keyOf(path))
      .map((u) => String(u.at(-1)));
  }

  /** Could a lost relationship have been the child list `name` of `table`? */
  mayHaveChildList(table: string, name: string): boolean {
    for (const unit of this.#units) {
      if (unit[0] !== "tables") continue;
      if (unit.length === 1) return true;
      const child = String(unit[1]);
      if (unit.length === 2) {
        const parents = valueAt(this.#sent, ["tables", child, "parents"]);
        if (parents === undefined) continue;
        if (!isObject(parents)) return true;
        if (Object.values(parents).some((p) => couldBe(p, child, table, name))) return true;
      } else if (unit.length === 4 && unit[2] === "parents") {
        if (couldBe(valueAt(this.#sent, unit), child, table, name)) return true;
      }
    }
    return false;
  }
}

/** Could the relationship `sent` (of table `child`, as sent) be the child list `name` of `table`? */
function couldBe(sent: unknown, child: string, table: string, name: string): boolean {
  if (!isObject(sent)) return true;
  if (typeof sent.table === "string" && sent.table !== table) return false;
  if (sent.children === undefined) return `${child}List` === name;
  return typeof sent.children !== "string" || sent.children === name;
}

/** Is `path` one of the parts a structural problem can lose? */
function isPart(path: readonly PropertyKey[]): boolean {
  const [section] = path;
  switch (section) {
    case "tables":
      return path.length === 2 || (path.length === 4 && (path[2] === "columns" || path[2] === "parents"));
    case "apiVersions": {
      if (path.length === 2) return true;
      // A version's events and its list of libraries are set aside whole.
      if (path.length === 3) return path[2] === "events" || path[2] === "libraries";
      if (path.length < 4 || path.length % 2 !== 0 || path[2] !== "resources") return false;
      for (let i = 4; i < path.length; i += 2) if (path[i] !== "subresources") return false;
      return true;
    }
    case "roles":
      return path.length === 2 || (path.length === 4 && path[2] === "tables");
    case "rules":
    case "libraries":
      return path.length === 2;
    default:
      return false;
  }
}

/** The smallest part holding a problem at `path`: a top-level section at least, `[]` for the whole. */
function partOf(path: readonly PropertyKey[]): readonly PropertyKey[] {
  let part = path.slice(0, 1);
  for (let n = 2; n <= path.length; n++) if (isPart(path.slice(0, n))) part = path.slice(0, n);
  return part;
}

/** Top-level sections that must be present: a lost one is replaced by an empty one. */
const EMPTY_SECTION = new Map<PropertyKey, () => unknown>([
  ["tables", () => ({})],
  ["apiVersions", () => ({})],
  ["roles", () => ({})],
  ["libraries", () => ({})],
  ["rules", () => []],
]);

export interface Salvaged<D> {
  definition: D;
  lost: LostParts;
  /** Index in the definition as sent of each rule that survived. */
  ruleIndexes: number[];
}

/**
 * The definition without the parts that hold structural problems, parsed
 * again with `parse`; undefined when nothing can be saved (not an object).
 */
export function salvage<D>(
  sent: unknown,
  issues: readonly StructuralIssue[],
  parse: (value: unknown) => { success: true; data: D } | { success: false },
): Salvaged<D> | undefined {
  if (!isObject(sent)) return undefined;
  let copy: Record<string, unknown>;
  try {
    copy = structuredClone(sent);
  } catch {
    return undefined;
  }
  const lost = new LostParts(sent);
  const lostRules = new Set<number>();
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      const holder = valueAt(copy, issue.path);
      if (isObject(holder)) for (const key of issue.keys ?? []) delete holder[key];
      continue;
    }
    const part = partOf(issue.path);
    const [section] = part;
    if (section === undefined) return undefined;
    lost.add(part);
    if (part.length === 1) {
      const empty = EMPTY_SECTION.get(section);
      if (empty) copy[String(section)] = empty();
      else delete copy[String(section)];
    } else if (section === "rules") {
      // Removed below, all at once, so that the indexes of the others are known.
      lostRules.add(Number(part[1]));
    } else {
      const holder = valueAt(copy, part.slice(0, -1));
      if (isObject(holder)) delete holder[String(part.at(-1))];
    }
  }
  const ruleIndexes: number[] = [];
  if (Array.isArray(copy.rules)) {
    copy.rules = copy.rules.filter((_, i) => {
      if (lostRules.has(i)) return false;
      ruleIndexes.push(i);
      return true;
    });
  }
  const parsed = parse(copy);
  return parsed.success ? { definition: parsed.data, lost, ruleIndexes } : undefined;
}
