/**
 * JSON answers as XML 1.0 (`responseformat=xml`). The mapping is generic, so
 * resources and meta endpoints share it:
 *
 * - the answer is the root element, `<response>` unless the API version names
 *   another (`xmlRootElement`);
 * - an object is an element with one child element per property, an array an
 *   element with one `<item>` per entry, a scalar an element with its text,
 *   null an empty element with `xsi:nil="true"`;
 * - an object's `@metadata` becomes XML attributes of its element (`href`,
 *   `checksum`, `next_batch`, …); a non-scalar metadata entry (`links`) becomes
 *   a child element named `_` + its name;
 * - a property name that is not a safe XML name is encoded as in SQL/XML and
 *   .NET's XmlConvert.EncodeName: each offending character becomes `_xHHHH_`
 *   (its code point in hex; 8 digits beyond U+FFFF), so `a b` is `a_x0020_b`.
 *
 * Written by hand: the escaping rules are few (below), and no small library
 * both encodes names and replaces the characters XML 1.0 cannot carry.
 */
import { present } from "../../../../shared/present.ts";
import { isPlainObject } from "../domain/model/column-values.ts";

const XSI = "http://www.w3.org/2001/XMLSchema-instance";

/** Characters XML 1.0 cannot carry at all, even as references (C0 controls, U+FFFE/FFFF, lone surrogates). */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * Any character that may need work, as the complement of those that never do
 * (most texts have none): markup, controls, surrogates, U+FFFE/FFFF; in
 * attribute values also quotes, tab and line feed.
 */
const TEXT_MAY_NEED_WORK = /[^\t\n\u0020-\u0025\u0027-\u003B\u003D\u003F-\uD7FF\uE000-\uFFFD]/;
const ATTRIBUTE_MAY_NEED_WORK = /[^\u0020\u0021\u0023-\u0025\u0027-\u003B\u003D\u003F-\uD7FF\uE000-\uFFFD]/;

function xmlChars(text: string): string {
  return text.replace(NOT_XML_CHAR, "\uFFFD");
}

/** Element text: markup characters escaped; CR as a reference, since parsers turn a raw CR into LF. */
export function escapeText(text: string): string {
  if (!TEXT_MAY_NEED_WORK.test(text)) return text;
  return xmlChars(text).replace(/[&<>\r]/g, (c) => TEXT_ESCAPES[c] ?? c);
}

/** Attribute values: also quotes, and tab/LF/CR as references (parsers turn raw ones into spaces). */
export function escapeAttribute(text: string): string {
  if (!ATTRIBUTE_MAY_NEED_WORK.test(text)) return text;
  return xmlChars(text).replace(/[&<>"\t\n\r]/g, (c) => TEXT_ESCAPES[c] ?? c);
}

const TEXT_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "\t": "&#9;",
  "\n": "&#10;",
  "\r": "&#13;",
};

function encodeChar(c: string): string {
  const code = present(c.codePointAt(0), "the code point of a name's character");
  return `_x${code
    .toString(16)
    .toUpperCase()
    .padStart(code > 0xffff ? 8 : 4, "0")}_`;
}

/** Names that need no encoding (the common case: column names, aliases, sub-resource names). */
const PLAIN_NAME = /^(?![Xx][Mm][Ll])[A-Za-z][A-Za-z0-9.-]*(?:_(?!x)[A-Za-z0-9.-]*)*$/;

/**
 * A safe XML element or attribute name for any property name. Kept as is: ASCII
 * letters, `_`, and after the first character digits, `-` and `.`. Encoded: every
 * other character (also `:`, which namespaces reserve, and non-ASCII letters, on
 * which XML editions differ), a leading `xml` (reserved) and a `_` before `x`
 * (so that an encoded name decodes unambiguously). The empty name becomes `_`.
 */
export function xmlName(name: string): string {
  if (PLAIN_NAME.test(name)) return name;
  if (name === "") return "_";
  let out = "";
  let index = 0;
  for (const c of name) {
    const first = index === 0;
    const safe = /[A-Za-z_]/.test(c) || (!first && /[0-9.-]/.test(c));
    const reserved = (first && /^xml/i.test(name)) || (c === "_" && name[index + 1] === "x");
    out += safe && !reserved ? c : encodeChar(c);
    index += c.length;
  }
  return out;
}

function scalarText(value: string | number | boolean): string {
  return typeof value === "string" ? value : String(value);
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

/** An element still to write (its name, value and attributes), or a closing tag. */
type Task = string | { name: string; value: unknown; attributes: string };

/** Writes elements depth first with a stack of its own, so that deep `json` values cannot exhaust the call stack. */
function writeElements(root: Task, out: string[]): void {
  const tasks: Task[] = [root];
  for (let task = tasks.pop(); task !== undefined; task = tasks.pop()) {
    if (typeof task === "string") {
      out.push(task);
      continue;
    }
    const { name, value } = task;
    let attributes = task.attributes;
    if (value === null || value === undefined) {
      out.push(`<${name}${attributes} xsi:nil="true"/>`);
      continue;
    }
    if (isScalar(value)) {
      out.push(`<${name}${attributes}>${escapeText(scalarText(value))}</${name}>`);
      continue;
    }
    const children: Task[] = [];
    if (Array.isArray(value)) {
      for (const item of value) children.push({ name: "item", value: item, attributes: "" });
    } else {
      const object = value as Record<string, unknown>;
      const meta = isPlainObject(object["@metadata"]) ? object["@metadata"] : undefined;
      for (const [key, v] of Object.entries(meta ?? {})) {
        if (isScalar(v)) attributes += ` ${xmlName(key)}="${escapeAttribute(scalarText(v))}"`;
        else children.push({ name: `_${xmlName(key)}`, value: v, attributes: "" });
      }
      for (const [key, v] of Object.entries(object)) {
        if (key !== "@metadata" || !meta) children.push({ name: xmlName(key), value: v, attributes: "" });
      }
    }
    if (children.length === 0 && !Array.isArray(value)) {
      out.push(`<${name}${attributes}/>`);
      continue;
    }
    out.push(`<${name}${attributes}>`);
    tasks.push(`</${name}>`);
    for (const child of children.toReversed()) tasks.push(child);
  }
}

/** The whole document for one JSON answer, under the root element `rootName` (an XML name). */
export function toXml(value: unknown, rootName = "response"): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  writeElements({ name: rootName, value, attributes: ` xmlns:xsi="${XSI}"` }, out);
  out.push("\n");
  return out.join("");
}
