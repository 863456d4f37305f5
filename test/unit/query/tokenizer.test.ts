import { expect } from "chai";
import { tokenize } from "../../../services/data/src/query/tokenizer.ts";
import { expectBadFilter } from "./helpers.ts";

const kinds = (text: string) => tokenize(text, "filter").map((t) => t.kind);

describe("query: tokenizer", () => {
  it("splits text into typed tokens with positions", () => {
    const tokens = tokenize("a>=-1.5e2 AND \"b c\" in ('x''y', @{g.h}) !=", "filter");
    expect(tokens.map(({ kind, pos, end }) => [kind, pos, end])).to.deep.equal([
      ["name", 0, 1],
      ["op", 1, 3],
      ["number", 3, 9],
      ["keyword", 10, 13],
      ["name", 14, 19],
      ["keyword", 20, 22],
      ["(", 23, 24],
      ["string", 24, 30],
      [",", 30, 31],
      ["global", 32, 38],
      [")", 38, 39],
      ["op", 40, 42],
      ["eof", 42, 42],
    ]);
    expect(tokens[2]).to.include({ value: -150, text: "-1.5e2" });
    expect(tokens[3]).to.include({ word: "and" });
    expect(tokens[4]).to.include({ name: "b c", quoted: true });
    expect(tokens[7]).to.include({ value: "x'y" });
    expect(tokens[9]).to.include({ name: "g.h" });
  });

  it("reads operators greedily", () => {
    expect(tokenize("<><=>=!=<>=", "filter").map((t) => (t.kind === "op" ? t.op : t.kind))).to.deep.equal([
      "<>",
      "<=",
      ">=",
      "!=",
      "<>",
      "=",
      "eof",
    ]);
  });

  it("treats every keyword case-insensitively, quoted names never as keywords", () => {
    for (const word of ["AND", "Or", "nOT", "LIKE", "In", "IS", "NULL", "True", "FALSE"]) {
      expect(kinds(word)[0], word).to.equal("keyword");
      expect(kinds(`"${word}"`)[0], word).to.equal("name");
    }
    expect(kinds("andy nullable island")).to.deep.equal(["name", "name", "name", "eof"]);
  });

  it("accepts all whitespace kinds between tokens, and strings spanning lines", () => {
    expect(kinds("\ta\r\n=\n'x\ny' ")).to.deep.equal(["name", "op", "string", "eof"]);
  });

  it("keeps any Unicode inside strings and quoted names", () => {
    const [name, , value] = tokenize("\"日本 語\" = 'e\u0301 \u200b \u202e 😀'", "filter");
    expect(name).to.include({ name: "日本 語" });
    expect(value).to.include({ value: "e\u0301 \u200b \u202e 😀" });
  });

  it("rejects invisible and look-alike characters outside strings", () => {
    expectBadFilter(() => tokenize("a\u200b = 1", "filter"), {
      position: 2,
      includes: "unexpected character",
    });
    expectBadFilter(() => tokenize("a \uff1d 1", "filter"), {
      position: 3,
      includes: "unexpected character '＝'",
    });
    expectBadFilter(() => tokenize("a = \u2019x\u2019", "filter"), { position: 5 });
  });

  it("uses the label in messages", () => {
    expectBadFilter(() => tokenize("a ; b", "order"), { includes: "Invalid order at position 3" });
  });
});
