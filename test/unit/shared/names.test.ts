/** The one name grammar (shared/names.ts, docs/names.md). */
import { expect } from "chai";
import {
  isStoredName,
  type NameKind,
  nameProblem,
  pathResolvesAway,
  segmentProblem,
} from "../../../shared/names.ts";

const KINDS: NameKind[] = [
  "account",
  "project",
  "version",
  "table",
  "resource",
  "library",
  "column",
  "role",
  "user",
  "admin",
  "keyId",
];

describe("name grammar", () => {
  for (const kind of KINDS) {
    it(`refuses empty, dot-only and reserved ${kind} names`, () => {
      for (const name of ["", ".", "..", "....", "__proto__", "constructor", "prototype"])
        expect(nameProblem(kind, name), name).to.be.a("string");
    });
  }

  it("refuses control and bidirectional-override characters in a role name", () => {
    for (const name of [
      "a\u0000b",
      "tab\there",
      "del\u007f",
      "c1\u0085",
      "rtl\u202eevil",
      "iso\u2066x",
      "lrm\u200e",
    ])
      expect(nameProblem("role", name), JSON.stringify(name)).to.be.a("string");
  });

  it("refuses a lone surrogate, accepts a pair", () => {
    expect(segmentProblem("a\ud800")).to.equal("must not contain a lone surrogate");
    expect(segmentProblem("a\udc00b")).to.equal("must not contain a lone surrogate");
    expect(nameProblem("role", "emoji \u{1f600}")).to.equal(undefined);
  });

  it("accepts the names of the walk-through", () => {
    expect(nameProblem("account", "acme")).to.equal(undefined);
    expect(nameProblem("project", "demo")).to.equal(undefined);
    expect(nameProblem("role", "Full access")).to.equal(undefined);
    expect(nameProblem("user", "alice.smith@example.com")).to.equal(undefined);
    expect(nameProblem("column", "credit_limit")).to.equal(undefined);
    expect(nameProblem("keyId", "Zx3_-9aQ1bC2")).to.equal(undefined);
  });

  it("keeps each kind's characters: no '-' in columns, no '.' in accounts, at most 100 characters in roles", () => {
    expect(nameProblem("column", "a-b")).to.be.a("string");
    expect(nameProblem("account", "a.b")).to.be.a("string");
    expect(nameProblem("role", "r".repeat(101))).to.be.a("string");
    expect(nameProblem("keyId", "a.b")).to.be.a("string");
  });

  it("lets names stored before the grammar be addressed, but not new nonsense", () => {
    expect(isStoredName("user", "..")).to.equal(true);
    expect(isStoredName("role", "constructor")).to.equal(true);
    expect(isStoredName("account", "constructor")).to.equal(true);
    expect(isStoredName("account", "a/b")).to.equal(false);
    expect(isStoredName("user", "")).to.equal(false);
  });

  it("finds the path segments a client would resolve away, encoded or not", () => {
    for (const path of ["/a/..", "/a/./b", "/a/%2E%2E", "/a/.%2e/b?x=1", "/a/%2e"])
      expect(pathResolvesAway(path), path).to.equal(true);
    for (const path of ["/a/b", "/a/...", "/a/b.c", "/a/b?x=..", "/a/%2E%2Ex"])
      expect(pathResolvesAway(path), path).to.equal(false);
  });
});
