/**
 * JavaScript resources and events in project definitions: the model they
 * compile to, every problem at its path (structural and semantic in one
 * answer; a broken events list set aside whole), and their definition diff.
 */
import { expect } from "chai";
import { diffDefinitions } from "../../../services/data/src/domain/admin/definition-diff.ts";
import type { ProjectDefinition } from "../../../services/data/src/domain/definition/project-definition.ts";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject } from "../../../services/data/src/domain/model/project-model.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";

type Json = Record<string, unknown>;

function withScripts(version: Json, extra: Json = {}): Json {
  const def = demoProject() as Json & { apiVersions: { v1: Json } };
  Object.assign(def.apiVersions.v1, version);
  return { ...def, ...extra };
}

function problemsOf(definition: unknown): string[] {
  const parsed = parseProjectDefinition(definition);
  if (!parsed.ok) return parsed.problems.map((p) => `${p.path}: ${p.message}`);
  const compiled = compileProject(testIdentity, parsed.definition);
  return compiled.ok ? [] : compiled.problems.map((p) => `${p.path}: ${p.message}`);
}

function parsed(definition: unknown): ProjectDefinition {
  const result = parseProjectDefinition(definition);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.definition;
}

describe("JavaScript in definitions", () => {
  it("compiles JavaScript resources and events into the version's scripts", () => {
    const def = withScripts(
      {
        resources: {
          Customers: { type: "table", table: "customer" },
          Totals: {
            type: "javascript",
            code: "return await tessera.get('customer');",
            roles: ["Full access"],
          },
        },
        events: [
          { type: "response", code: "return response.body;" },
          {
            type: "request",
            name: "guard",
            code: "if (request.method === 'DELETE') return { reject: { statusCode: 403 } };",
          },
        ],
        libraries: ["helpers"],
      },
      { libraries: { helpers: { code: "function helper() {}" } } },
    );
    const parsedDefinition = parsed(def);
    const compiled = compileProject(testIdentity, parsedDefinition);
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
    const v1 = compiled.model.versions.get("v1")!;
    expect(v1.resources.has("Customers")).to.equal(true);
    expect(v1.resources.has("Totals")).to.equal(false);
    const totals = v1.scripts.resources.get("Totals")!;
    expect(totals.code).to.contain("tessera.get");
    expect([...totals.roles!]).to.deep.equal(["Full access"]);
    expect(v1.scripts.requestEvents).to.deep.equal([
      {
        type: "request",
        index: 1,
        label: "'guard'",
        code: "if (request.method === 'DELETE') return { reject: { statusCode: 403 } };",
      },
    ]);
    expect(v1.scripts.responseEvents.map((e) => e.label)).to.deep.equal(["#1"]);
    expect(v1.scripts.libraries).to.deep.equal(["helpers"]);
  });

  it("lists every problem, structural and semantic, at its path", () => {
    const def = withScripts({
      resources: {
        customer: { type: "javascript", code: "return 1;" },
        Syntax: { type: "javascript", code: "const x = ;\nreturn x;" },
        AwaitOk: { type: "javascript", code: "for await (const x of []) {}\nreturn await 1;" },
        NoRole: { type: "javascript", code: "return 1;", roles: ["Full access", "Ghost"] },
        NoCode: { type: "javascript" },
        Mixed: { type: "javascript", code: "return 1;", table: "customer" },
        Other: { type: "view", table: "customer" },
      },
      libraries: ["nowhere"],
    });
    expect(problemsOf(def)).to.have.members([
      "$.apiVersions.v1.resources.NoCode.code: required",
      "$.apiVersions.v1.resources.Mixed.table: unknown field 'table'",
      "$.apiVersions.v1.resources.Other.type: must be 'javascript', or 'table' (the default)",
      "$.apiVersions.v1.resources.customer: resource name 'customer' is already used (tables are resources too)",
      "$.apiVersions.v1.resources.Syntax.code: Unexpected token at line 1, column 11",
      "$.apiVersions.v1.resources.NoRole.roles[1]: no role 'Ghost'",
      "$.apiVersions.v1.libraries[0]: no library 'nowhere' in 'libraries'",
    ]);
  });

  it("sets a broken events list aside whole, and still reports the rest", () => {
    const def = withScripts({
      events: [
        { type: "request", code: "return;" },
        { type: "sometimes", code: "return;" },
        { type: "response", code: "" },
      ],
      resources: { Bad: { type: "javascript", code: "return (" } },
    });
    expect(problemsOf(def)).to.have.members([
      '$.apiVersions.v1.events[1].type: Invalid option: expected one of "request"|"response"',
      "$.apiVersions.v1.events[2].code: must not be empty",
      "$.apiVersions.v1.resources.Bad.code: Unexpected token at line 1, column 9",
    ]);
    expect(problemsOf(withScripts({ events: [{ type: "request", code: "return (" }] }))).to.deep.equal([
      "$.apiVersions.v1.events[0].code: Unexpected token at line 1, column 9",
    ]);
  });

  it("diffs JavaScript resources, events and libraries (code as digests only)", () => {
    const before = withScripts(
      {
        resources: {
          Totals: { type: "javascript", code: "return 1;" },
          Kept: { type: "javascript", code: "return 2;" },
          Turned: { table: "customer" },
        },
        events: [
          { type: "request", name: "guard", code: "return;" },
          { type: "response", code: "return;" },
        ],
      },
      { libraries: { helpers: { code: "function helper() {}" } } },
    );
    const after = structuredClone(before) as typeof before & {
      apiVersions: { v1: Json & { resources: Json } };
    };
    Object.assign(after.apiVersions.v1.resources, {
      Totals: { type: "javascript", code: "return 10;", roles: ["Full access"] },
      Turned: { type: "javascript", code: "return 3;" },
    });
    after.apiVersions.v1.events = [{ type: "request", name: "guard", code: "return null;" }];
    after.apiVersions.v1.libraries = ["helpers"];
    const diff = diffDefinitions(parsed(before), parsed(after));
    const v1 = diff.apiVersions!.changed!.v1!;
    expect(v1.resources!.changed!.Totals!.roles).to.deep.equal({ after: ["Full access"] });
    expect(v1.resources!.changed!.Totals!.code!.after.bytes).to.equal(10);
    expect(JSON.stringify(diff)).to.not.contain("return 10");
    expect(v1.resources!.changed!.Turned).to.deep.equal({ type: { before: "table", after: "javascript" } });
    expect(v1.resources!.changed!.Kept).to.equal(undefined);
    expect(Object.keys(v1.events!.changed!)).to.deep.equal(["guard"]);
    expect(v1.events!.removed).to.deep.equal(["response #2"]);
    expect(v1.libraries).to.deep.equal({ after: ["helpers"] });
    expect(diff.summary).to.equal("resources ~2, events ~1 -1");
  });
});
