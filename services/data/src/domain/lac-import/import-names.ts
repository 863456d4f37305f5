/**
 * Names from Live API Creator and its database made into Tessera names
 * (docs/names.md): characters Tessera does not allow become `_` (`Order
 * Details` → `Order_Details`), a name that does not start with a letter gets
 * one in front, long names are cut, and a name taken already gets a number.
 * LAC's own derived names follow the same way: a child list named after its
 * table (`Order_DetailsList`) is the name LAC gave it.
 */
import { COLUMN_NAME_PATTERN, NAME_PATTERN, RESERVED_NAMES } from "../../../../../shared/names.ts";

export type NameShape = "name" | "column";

/** `text` as a name of this shape (unchanged when it is one already). */
export function tesseraName(text: string, shape: NameShape): string {
  const pattern = shape === "column" ? COLUMN_NAME_PATTERN : NAME_PATTERN;
  if (pattern.test(text) && !RESERVED_NAMES.has(text)) return text;
  let name = text.trim().replace(shape === "column" ? /[^A-Za-z0-9_]/g : /[^A-Za-z0-9_-]/g, "_");
  if (!/^[A-Za-z]/.test(name)) name = `N${name}`;
  name = name.slice(0, 63);
  return RESERVED_NAMES.has(name) ? `${name}_` : name;
}

/** Names given in one namespace (a table's columns, a project's tables): each new one unique. */
export class NameSpace {
  readonly #taken = new Set<string>();

  constructor(taken: Iterable<string> = []) {
    for (const name of taken) this.#taken.add(name.toLowerCase());
  }

  /** `wanted` as a name of the shape, numbered when taken (names differing only in case count as taken). */
  claim(wanted: string, shape: NameShape): string {
    const base = tesseraName(wanted, shape);
    let name = base;
    for (let n = 2; this.#taken.has(name.toLowerCase()); n++) name = `${base.slice(0, 60)}${n}`;
    this.#taken.add(name.toLowerCase());
    return name;
  }

  has(name: string): boolean {
    return this.#taken.has(name.toLowerCase());
  }
}
