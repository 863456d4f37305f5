/**
 * What the definition editor offers at the cursor, from the server's definition schema:
 * the property names an object there may have (those it has already left out), or the
 * values a field takes (enum and const members, true/false). Pure: the editor turns
 * the answer into CodeMirror completions (code-editor.ts).
 */
import { getLocation, parse } from "jsonc-parser";
import { type JsonSchema, propertiesAt, valuesAt } from "./json-schema.ts";

export interface Offer {
  label: string;
  /** The text put in place of from…to. */
  apply: string;
  detail: string;
  info: string | undefined;
  kind: "property" | "value";
}

export interface Offers {
  from: number;
  to: number;
  options: Offer[];
}

/** A word being typed: a name or value, with its opening quote if any. */
const TYPED = /"?[A-Za-z0-9_$.-]*$/;

export function offersAt(schema: JsonSchema, text: string, offset: number): Offers | undefined {
  const location = getLocation(text, offset);
  const typed = TYPED.exec(text.slice(0, offset))?.[0] ?? "";
  const from = offset - typed.length;
  // A closing quote typed ahead of the cursor (or inserted with the opening one) is replaced too.
  const to = typed.startsWith('"') && text[offset] === '"' ? offset + 1 : offset;
  const document: unknown = parse(text);
  // What was typed so far starts what is offered (CodeMirror's own filter would trip on the quote).
  const prefix = typed.replace(/^"/, "").toLowerCase();
  const begins = (word: string) => word.toLowerCase().startsWith(prefix);
  if (location.isAtPropertyKey) {
    const objectPath = location.path.slice(0, -1);
    const present = new Set(Object.keys(objectAt(document, objectPath)));
    const options = propertiesAt(schema, document, objectPath)
      .filter((p) => begins(p.name) && (!present.has(p.name) || p.name.toLowerCase() === prefix))
      .map<Offer>((p) => ({
        label: p.name,
        apply: `${JSON.stringify(p.name)}: `,
        detail: p.required ? `${p.detail} (required)` : p.detail,
        info: p.description,
        kind: "property",
      }));
    return options.length ? { from, to, options } : undefined;
  }
  if (!atValue(text, from)) return undefined;
  const values = valuesAt(schema, document, location.path).filter((v) => begins(String(v)));
  const options = values.map<Offer>((v) => ({
    label: JSON.stringify(v),
    apply: JSON.stringify(v),
    detail: typeof v,
    info: undefined,
    kind: "value",
  }));
  return options.length ? { from, to, options } : undefined;
}

/** The value parsed so far at `path`, when it is an object (else an empty one). */
function objectAt(document: unknown, path: (string | number)[]): Record<string, unknown> {
  let at: unknown = document;
  for (const segment of path) {
    at =
      at !== null && typeof at === "object" ? (at as Record<string, unknown>)[segment as string] : undefined;
  }
  return at !== null && typeof at === "object" && !Array.isArray(at) ? (at as Record<string, unknown>) : {};
}

/** Whether a value starts at `from`: after a colon, an opening bracket or a comma in a list. */
function atValue(text: string, from: number): boolean {
  const before = text.slice(0, from).trimEnd();
  const last = before[before.length - 1];
  return last === ":" || last === "[" || last === ",";
}
