/**
 * The operator's name check (docs/operations.md): every stored name that breaks the
 * name grammar (docs/names.md) — accounts, projects, the names in their current
 * definitions, built-in users, administrators. Such names were accepted before the
 * grammar; they stay readable (and deletable) but cannot be written again.
 */
import { type NameKind, nameProblem } from "../../../../../shared/names.ts";
import type { AdminStore } from "../../store/admin-store.ts";
import type { MetaStore, StoredProject } from "../../store/meta-store.ts";
import type { UserStore } from "../../store/user-store.ts";
import { definitionNameProblems } from "../definition/definition-names.ts";
import { parseDefinitionStructure } from "../definition/project-definition.ts";

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
async function projectFindings(users: UserStore, project: StoredProject) {
  const { account } = project;
  const where = { account, project: project.name };
  const parsed = parseDefinitionStructure(project.definition);
  const inDefinition = parsed.ok ? definitionNameProblems(parsed.definition) : [];
  const stored = await users.list(project);
  return [
    ...check("project", project.name, { account }),
    ...inDefinition.map((p) => ({ ...where, kind: "definition" as const, name: p.path, problem: p.message })),
    ...stored.flatMap((u) => check("user", u.username, where)),
  ];
}

export async function storedNamesOutsideGrammar(deps: {
  meta: MetaStore;
  admins: AdminStore;
  users: UserStore;
}) {
  const findings: NameFinding[] = [];
  for (let after = "", done = false; !done; ) {
    const accounts = await deps.meta.listAccounts(after, PAGE);
    done = accounts.length < PAGE;
    for (const doc of accounts) {
      const account = doc._id;
      after = account;
      findings.push(...check("account", account, { account }));
      for (const p of await deps.meta.listProjects(account))
        findings.push(...(await projectFindings(deps.users, p)));
      for (const admin of await deps.admins.list(deps.meta.accountUid(doc)))
        findings.push(...check("admin", admin.login, { account }));
    }
  }
  return findings;
}
