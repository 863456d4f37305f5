/**
 * A strict XML reader for tests: saxes checks well-formedness to the letter of
 * XML 1.0 and Namespaces (names, characters, entities, one root) and throws on
 * any fault; the result is a plain element tree to assert on.
 */
import { SaxesParser } from "saxes";

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (not its children's). */
  text: string;
}

export function parseXml(text: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  parser.on("error", (err) => {
    throw err;
  });
  parser.on("opentag", (tag) => {
    const attributes: Record<string, string> = {};
    for (const [name, attr] of Object.entries(tag.attributes)) {
      attributes[name] = typeof attr === "string" ? attr : attr.value;
    }
    const element: XmlElement = { name: tag.name, attributes, children: [], text: "" };
    if (stack.length > 0) stack[stack.length - 1]!.children.push(element);
    else root = element;
    stack.push(element);
  });
  parser.on("text", (t) => {
    if (stack.length > 0) stack[stack.length - 1]!.text += t;
  });
  parser.on("closetag", () => {
    stack.pop();
  });
  parser.write(text).close();
  if (!root) throw new Error("no root element");
  return root;
}

/** The child elements named `name`. */
export function childrenNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((c) => c.name === name);
}

/** The one child element named `name` (throws when there is not exactly one). */
export function child(element: XmlElement, name: string): XmlElement {
  const found = childrenNamed(element, name);
  if (found.length !== 1) throw new Error(`<${element.name}> has ${found.length} <${name}> children`);
  return found[0]!;
}

/** Decodes `_xHHHH_` / `_xHHHHHHHH_` escapes in an element name (SQL/XML, XmlConvert.DecodeName). */
export function decodeXmlName(name: string): string {
  return name.replace(/_x([0-9A-F]{8}|[0-9A-F]{4})_/g, (_, hex: string) =>
    String.fromCodePoint(Number.parseInt(hex, 16)),
  );
}
