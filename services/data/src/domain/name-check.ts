/**
 * The operator's name check (docs/operations.md): every stored name that breaks the
 * name grammar (docs/names.md) — accounts, projects, the names in their current
 * definitions, built-in users, administrators. Such names were accepted before the
 * grammar; they stay readable (and deletable) but cannot be written again.
 */
import { type NameKind, nameProblem } from "../../../../shared/names.ts";
import type { AdminStore } from "../store/admin-store.ts";
import type { MetaStore } from "../store/meta-store.ts";
import { definitionNameProblems } from "./definition-names.ts";
import { parseProjectDefinition } from "./project-definition.ts";

export interface NameFinding {
  account: string;
  project?: string;
  kind: NameKind | "definition";
  name: string;
  problem: string;
}

const PAGE = 200;

function check(kind: NameKind, name: string, where: { account: string; project?: string }): NameFinding[] {
  const problem = nameProblem(kind, name);
  return problem === undefined ? [] : [{ ...where, kind, name, problem }];
}

/** What one project holds: its name, its definition's names, its users' names. */
async function projectFindings(meta: MetaStore, account: string, project: string, definition: unknown) {
  const where = { account, project };
  const parsed = parseProjectDefinition(definition);
  const inDefinition = parsed.ok ? definitionNameProblems(parsed.definition) : [];
  const users = await meta.listUsers(account, project);
  return [
    ...check("project", project, { account }),
    ...inDefinition.map((p) => ({ ...where, kind: "definition" as const, name: p.path, problem: p.message })),
    ...users.flatMap((u) => check("user", u.username, where)),
  ];
}

export async function storedNamesOutsideGrammar(deps: { meta: MetaStore; admins: AdminStore }) {
  const findings: NameFinding[] = [];
  for (let after = "", done = false; !done; ) {
    const accounts = await deps.meta.listAccounts(after, PAGE);
    done = accounts.length < PAGE;
    for (const doc of accounts) {
      const account = doc._id;
      after = account;
      findings.push(...check("account", account, { account }));
      for (const p of await deps.meta.listProjects(account))
        findings.push(...(await projectFindings(deps.meta, account, p.name, p.definition)));
      for (const admin of await deps.admins.list(deps.meta.accountUid(doc)))
        findings.push(...check("admin", admin.login, { account }));
    }
  }
  return findings;
}
