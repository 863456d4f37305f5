/**
 * The rule format is a public interface: every rule the documentation and the
 * example show is accepted, each rule type takes exactly its own fields, and
 * each refusal names the field.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject } from "../../../services/data/src/domain/model/project-model.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";

const root = path.resolve(import.meta.dirname, "../../..");

/** Every JSON object in `text` that starts with `{"table"` and has a `type` (rules as the docs show them). */
function rulesIn(text: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  for (let start = text.indexOf('{"table"'); start >= 0; start = text.indexOf('{"table"', start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{") depth++;
      else if (c === "}" && --depth === 0) {
        const object = JSON.parse(text.slice(start, i + 1));
        if ("type" in object) found.push(object);
        break;
      }
    }
  }
  return found;
}

/** Problems of a definition holding only `rule` (its table does not exist: that one problem is expected). */
function problemsOfRule(rule: unknown): string[] {
  const parsed = parseProjectDefinition({ tables: {}, apiVersions: { v1: {} }, rules: [rule] });
  const problems = parsed.ok ? compileProject(testIdentity, parsed.definition) : parsed;
  return problems.ok ? [] : problems.problems.map((p) => `${p.path}: ${p.message}`);
}

describe("rule definitions: one shape per rule type", () => {
  const documented = [
    ...rulesIn(readFileSync(path.join(root, "docs/rules.md"), "utf8")),
    ...rulesIn(readFileSync(path.join(root, "docs/project-definitions.md"), "utf8")),
    ...JSON.parse(readFileSync(path.join(root, "examples/canonical/project.json"), "utf8")).rules,
  ];

  it("accepts every rule the documentation and the canonical example show", () => {
    const types = new Set(documented.map((r) => r.type));
    expect([...types].sort()).to.deep.equal([
      "commitValidation",
      "count",
      "earlyEvent",
      "event",
      "formula",
      "managedParent",
      "max",
      "min",
      "parentCopy",
      "sum",
      "validation",
    ]);
    for (const rule of documented) {
      expect(problemsOfRule(rule), JSON.stringify(rule)).to.deep.equal([
        `$.rules[0].table: no table '${rule.table}'`,
      ]);
    }
  });

  it("still takes an empty where as no where, and a name on any rule", () => {
    for (const rule of [
      { table: "t", type: "count", column: "n", children: "items", where: "" },
      { table: "t", type: "commitEvent", code: "row.a;", name: "audit" },
      { table: "t", type: "managedParent", parent: "dept", name: "make the dept" },
    ]) {
      expect(problemsOfRule(rule)).to.deep.equal(["$.rules[0].table: no table 't'"]);
    }
  });

  it("names a missing field of each rule type", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "sum", column: "c", children: "items" }, "of"],
      [{ type: "min", column: "c", of: "x" }, "children"],
      [{ type: "count", children: "items" }, "column"],
      [{ type: "formula", column: "c" }, "expression"],
      [{ type: "parentCopy", column: "c", parent: "p" }, "from"],
      [{ type: "validation", message: "m" }, "expression"],
      [{ type: "event" }, "code"],
      [{ type: "managedParent" }, "parent"],
      [{ table: "t", column: "c" }, "type"],
    ];
    for (const [rule, field] of cases) {
      expect(problemsOfRule({ table: "t", ...rule }), JSON.stringify(rule)).to.deep.equal([
        `$.rules[0].${field}: required`,
      ]);
    }
  });

  it("refuses a field the rule type does not take, naming it", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "count", column: "c", children: "items", of: "x" }, "of"],
      [{ type: "validation", expression: "true", column: "c" }, "column"],
      [{ type: "formula", column: "c", expression: "1", message: "m" }, "message"],
      [{ type: "event", code: "1", where: "true" }, "where"],
      [{ type: "managedParent", parent: "p", from: "x" }, "from"],
      [{ type: "sum", column: "c", children: "items", of: "x", expresion: "1" }, "expresion"],
    ];
    for (const [rule, field] of cases) {
      expect(problemsOfRule({ table: "t", ...rule }), JSON.stringify(rule)).to.deep.equal([
        `$.rules[0].${field}: a ${rule.type} rule has no '${field}'`,
        "$.rules[0].table: no table 't'",
      ]);
    }
  });

  it("refuses empty code, which could never run", () => {
    expect(problemsOfRule({ table: "t", type: "formula", column: "c", expression: "" })).to.deep.equal([
      "$.rules[0].expression: must not be empty",
    ]);
    expect(problemsOfRule({ table: "t", type: "earlyEvent", code: "" })).to.deep.equal([
      "$.rules[0].code: must not be empty",
    ]);
  });
});
