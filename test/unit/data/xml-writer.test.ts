/** The XML form of JSON answers, read back with a strict XML 1.0 parser (saxes). */
import { expect } from "chai";
import fc from "fast-check";
import { escapeAttribute, escapeText, toXml, xmlName } from "../../../services/data/src/http/xml-writer.ts";
import { child, childrenNamed, decodeXmlName, parseXml, type XmlElement } from "../../support/xml.ts";

/** What XML 1.0 can carry of a text: characters it cannot hold at all are U+FFFD. */
const carried = (text: string) =>
  text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "\uFFFD");

/** Checks an element against the JSON value it was written from, by the documented mapping. */
function expectElement(element: XmlElement, value: unknown): void {
  if (value === null) {
    expect(element.attributes["xsi:nil"]).to.equal("true");
    expect(element.children).to.deep.equal([]);
  } else if (typeof value !== "object") {
    expect(element.text).to.equal(carried(String(value)));
    expect(element.children).to.deep.equal([]);
  } else if (Array.isArray(value)) {
    expect(element.children.map((c) => c.name)).to.deep.equal(value.map(() => "item"));
    value.forEach((v, i) => {
      expectElement(element.children[i]!, v);
    });
  } else {
    const entries = Object.entries(value as Record<string, unknown>);
    expect(element.children.map((c) => decodeXmlName(c.name))).to.deep.equal(
      entries.map(([k]) => (k === "" ? "_" : k)),
    );
    entries.forEach(([, v], i) => {
      expectElement(element.children[i]!, v);
    });
  }
}

describe("XML writer", () => {
  it("keeps safe names and encodes the others so that they decode back", () => {
    const cases: [string, string][] = [
      ["name", "name"],
      ["credit_limit", "credit_limit"],
      ["Customers.Orders", "Customers.Orders"],
      ["a-b", "a-b"],
      ["a b", "a_x0020_b"],
      ["1x", "_x0031_x"],
      ["-x", "_x002D_x"],
      ["@metadata", "_x0040_metadata"],
      ["xmlns", "_x0078_mlns"],
      ["XmlThing", "_x0058_mlThing"],
      ["a:b", "a_x003A_b"],
      ["_x0041_", "_x005F_x0041_"],
      ["é", "_x00E9_"],
      ["😀", "_x0001F600_"],
      ["\uD800", "_xD800_"],
      ["", "_"],
    ];
    for (const [name, encoded] of cases) {
      expect(xmlName(name), name).to.equal(encoded);
      if (name !== "") expect(decodeXmlName(encoded)).to.equal(name);
    }
  });

  it("escapes markup, keeps CR, and replaces characters XML 1.0 cannot carry", () => {
    expect(escapeText("a<b>&c]]>\r\n")).to.equal("a&lt;b&gt;&amp;c]]&gt;&#13;\n");
    expect(escapeText("\u0000\u0008\uFFFE\uD800x")).to.equal("\uFFFD\uFFFD\uFFFD\uFFFDx");
    expect(escapeAttribute('say "hi"\tand\nbye\r')).to.equal("say &quot;hi&quot;&#9;and&#10;bye&#13;");
    for (const [raw, escaped] of [
      ["a\tb", "a&#9;b"],
      ["a\nb", "a&#10;b"],
      ['a"b', "a&quot;b"],
      ["a&b", "a&amp;b"],
      ["a>b", "a&gt;b"],
      ["a\u001Fb", "a\uFFFDb"],
      ["plain text, 😀 é", "plain text, 😀 é"],
    ]) {
      expect(escapeAttribute(raw!), JSON.stringify(raw)).to.equal(escaped);
    }
    expect(escapeText('a"b\tc\nd')).to.equal('a"b\tc\nd');
    expect(escapeText("a\u0000<b")).to.equal("a\uFFFD&lt;b");
    const root = parseXml(toXml({ text: "line1\r\nline2\r", tab: "\t<x>&amp;" }));
    expect(child(root, "text").text).to.equal("line1\r\nline2\r");
    expect(child(root, "tab").text).to.equal("\t<x>&amp;");
  });

  it("puts @metadata into attributes, its non-scalar entries into `_` elements", () => {
    const root = parseXml(
      toXml([
        {
          "@metadata": {
            href: "http://h/c/a%20b?x=1&y=2",
            checksum: 'R:"1"\n',
            links: [{ rel: "children" }],
          },
          name: "a b",
          orders: [],
          region: null,
        },
        { "@metadata": { next_batch: "http://h/c?offset=20" } },
      ]),
    );
    expect(root.name).to.equal("response");
    const [row, next] = childrenNamed(root, "item");
    expect(row!.attributes.href).to.equal("http://h/c/a%20b?x=1&y=2");
    expect(row!.attributes.checksum).to.equal('R:"1"\n');
    expect(child(child(child(row!, "_links"), "item"), "rel").text).to.equal("children");
    expect(child(row!, "name").text).to.equal("a b");
    expect(child(row!, "orders").children).to.deep.equal([]);
    expect(child(row!, "region").attributes["xsi:nil"]).to.equal("true");
    expect(next!.attributes).to.deep.equal({ next_batch: "http://h/c?offset=20" });
    expect(next!.children).to.deep.equal([]);
  });

  it("names the root element as asked (a version's xmlRootElement)", () => {
    const root = parseXml(toXml([{ name: "a" }], "CustomerFeed"));
    expect(root.name).to.equal("CustomerFeed");
    expect(root.attributes["xmlns:xsi"]).to.equal("http://www.w3.org/2001/XMLSchema-instance");
    expect(child(childrenNamed(root, "item")[0]!, "name").text).to.equal("a");
  });

  it("writes values nested deeper than the call stack would allow", () => {
    const depth = 8_000;
    let value: unknown = "bottom";
    for (let i = 0; i < depth; i++) value = i % 2 ? { a: value } : [value];
    let element = parseXml(toXml(value));
    for (let i = 0; i < depth; i++) element = element.children[0]!;
    expect(element.text).to.equal("bottom");
  });

  it("writes well-formed XML that carries every JSON value, whatever its names and texts", () => {
    // Any text, and texts of the characters the name rules turn on (`xml`, `_x`, digits, `.`, `-`).
    const edgy = fc.string({ unit: fc.constantFrom(..."xXmMlL_a1.-:é"), maxLength: 8 });
    const key = fc
      .oneof(fc.string({ unit: "binary", maxLength: 8 }), edgy)
      .filter((k) => k !== "@metadata" && k !== "");
    const text = fc.string({ unit: "binary", maxLength: 20 });
    const scalar = fc.oneof(
      text,
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    );
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: "small" }, scalar, tie("array"), tie("object")),
      array: fc.array(tie("value"), { maxLength: 4 }),
      object: fc.dictionary(key, tie("value"), { maxKeys: 4 }),
    }));
    fc.assert(
      fc.property(value, (v) => {
        const json = JSON.parse(JSON.stringify(v)) as unknown;
        expectElement(parseXml(toXml(json)), json);
      }),
      { numRuns: 300 },
    );
  });
});
