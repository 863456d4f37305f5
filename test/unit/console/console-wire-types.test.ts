/**
 * One shape per admin API answer: the console's screens name the wire types the data service's
 * views are typed with (shared/contracts/admin-api.ts), through the typed admin API
 * (services/console/ui/src/admin-api.ts), and declare none of their own.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { apiModuleFindings, screenFindings } from "../../support/console-wire-types.ts";

const UI = path.resolve(import.meta.dirname, "../../../services/console/ui/src");
const SCREENS = path.join(UI, "screens");

describe("console: wire types come from the shared contracts", () => {
  const screens = readdirSync(SCREENS).filter((f) => f.endsWith(".tsx"));

  it("finds the screens", () => {
    expect(screens).to.include.members(["Webhooks.tsx", "ApiKeys.tsx", "SignIn.tsx"]);
  });

  for (const file of screens)
    it(`${file} calls no client itself`, () => {
      const findings = screenFindings(file, readFileSync(path.join(SCREENS, file), "utf8"));
      expect(findings.map((f) => `${file}:${f.line} ${f.problem}`)).to.deep.equal([]);
    });

  it("the admin API types every answer with a shared contract", () => {
    const file = path.join(UI, "admin-api.ts");
    const findings = apiModuleFindings(file, readFileSync(file, "utf8"));
    expect(findings.map((f) => `admin-api.ts:${f.line} ${f.problem}`)).to.deep.equal([]);
  });

  it("tells a screen with its own wire type", () => {
    const screen = `
      interface Subscription { id: string }
      export function S(props: { context: { client: Client } }) {
        const load = async () => (await props.context.client.call<Subscription[]>("GET", "/x")).body;
        return load;
      }`;
    const found = screenFindings("S.tsx", screen);
    expect(found.map((f) => f.line)).to.deep.equal([4]);
    expect(found[0]?.problem).to.include("props.context.client.call");
  });

  it("tells an admin API call typed with a type of its own or a literal", () => {
    const api = `
      import type { UserView } from "../../../../shared/contracts/admin-api.ts";
      interface Own { id: string }
      export const a = <T>(client: Client) => ({
        users: () => client.call<UserView[]>("GET", "/u"),
        own: () => client.call<Own>("GET", "/o"),
        literal: () => get<{ replayed: number }>("/r"),
        generic: () => client.call<T>("GET", "/t"),
        record: () => client.call<Record<string, unknown>>("GET", "/r"),
      });`;
    const found = apiModuleFindings("admin-api.ts", api);
    expect(found.map((f) => [f.line, f.problem])).to.deep.equal([
      [6, "answer typed Own, not a shared contract"],
      [7, "answer typed by a type literal, not a shared contract"],
    ]);
  });
});
