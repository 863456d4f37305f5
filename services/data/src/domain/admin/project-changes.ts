/**
 * Changing a project's definition, the one way every change goes (PUT, rollback)
 * and the way a dry run previews it: the definition is checked whole (every
 * problem in one 400), compared with the current one (definition-diff.ts, whose
 * summary the revision history and the audit show), and stored as the next
 * revision together with its history record. Masked secrets in it keep the
 * stored values (definition-secrets.ts), under the project's lease. Changes of one project are
 * serialised (a Redis lease), so a precondition on the revision (`If-Match`)
 * holds until the write: of two changes made against the same revision, one
 * fails with 412. A project belongs to one incarnation of its account, and a
 * change is made only while that account is still the one the request found.
 */
import { randomUUID } from "node:crypto";
import type { AuditActor } from "../../../../../shared/admin-access/audit.ts";
import { errors } from "../../../../../shared/errors.ts";
import { type Precondition, preconditionMet, stateTag } from "../../../../../shared/http/if-match.ts";
import type { KeyLimitOf } from "../../../../../shared/quotas/key-limit.ts";
import type { CountLimit, EffectiveLimits, LimitName } from "../../../../../shared/quotas/plans.ts";
import type { Leases } from "../../store/leases.ts";
import type { AccountDoc, MetaStore, StoredProject } from "../../store/meta-store.ts";
import type { ProjectCache } from "../../store/project-cache.ts";
import type { RevisionStore } from "../../store/revision-store.ts";
import type { TenantStorage } from "../../store/storage-names.ts";
import type { TableIndex } from "../../store/tenant-rows.ts";
import { definitionNameProblems } from "../definition/definition-names.ts";
import { restoreSecrets } from "../definition/definition-secrets.ts";
import type { Problem } from "../definition/problems.ts";
import {
  type ProjectDefinition,
  parseDefinitionStructure,
  projectDefinitionSchema,
} from "../definition/project-definition.ts";
import { parseProjectDefinition } from "../model/definition-check.ts";
import {
  compileProject,
  type FilterChecker,
  type ProjectModel,
  UNSERVED_IDENTITY,
} from "../model/project-model.ts";
import { definitionIndexes } from "../model/table-indexes.ts";
import { holdProject, holdProjectCreation } from "./change-leases.ts";
import { type DefinitionDiff, diffDefinitions } from "./definition-diff.ts";

export interface DefinitionChecks {
  checkFilter: FilterChecker;
}

/** What identifies one revision of one incarnation of a project (its ETag's value). */
export function projectTag(project: { uid: string; revision: number }): string {
  return `${project.uid}.${project.revision}`;
}

/** What identifies the state of one incarnation of an account (its ETag's value): its display name. */
export function accountTag(meta: Pick<MetaStore, "accountUid">, doc: AccountDoc): string {
  return stateTag(meta.accountUid(doc), [doc.displayName ?? null]);
}

/** Makes a project's store indexes (store/table-index-store.ts), in the background; never throws. */
export interface IndexMaker {
  /** Makes a revision's indexes; `always`: even when this process made them already. */
  applyRevision(
    project: { storage: TenantStorage; uid: string; revision: number },
    wanted: Map<string, TableIndex[]>,
    options?: { always?: boolean },
  ): Promise<void>;
}

/**
 * The count limits of the account's plan (usage/account-quotas.ts): refuses with 403/4032 when
 * `used + adding` passes the limit. Called where the change is serialised.
 */
export interface CountChecks {
  checkCount(account: string, limit: CountLimit, used: number, adding?: number): Promise<void>;
  /** The account's limit (null: none), to know whether a change needs counting at all. */
  limitOf(account: string, limit: LimitName): Promise<number | null>;
  /** The account's plan and effective limits. */
  limitsOf(account: string): Promise<EffectiveLimits>;
  /** Counts a refusal made elsewhere (Prometheus). */
  refused(limit: LimitName): void;
  /** The plan's apiKeysPerProject, as the key store applies it. */
  keyLimit: KeyLimitOf;
  /** The account's stored bytes as last measured (undefined: not measured yet). */
  storedBytesOf(account: string): Promise<number | undefined>;
}

export interface ProjectChangeDeps {
  meta: MetaStore;
  revisions: RevisionStore;
  projects: ProjectCache<ProjectModel>;
  leases: Leases;
  indexes?: IndexMaker;
  /** The plans' count limits (absent: none). */
  quotas?: CountChecks;
}

export interface ProjectChange {
  account: string;
  /** The account's incarnation the request found: the change is made in it or not at all (404). */
  accountUid: string;
  project: string;
  definition: ProjectDefinition;
  precondition?: Precondition;
  /** Only if the project is still this incarnation (a rollback to one of its revisions). */
  uid?: string;
  /** Only if the project does not exist yet (an import makes a new project): 409 otherwise. */
  mustCreate?: boolean;
  by: AuditActor;
  requestId: string;
  /** The summary recorded, from the diff's summary line (default: that line). */
  describe?: (diffSummary: string) => string;
}

export interface AppliedChange {
  created: boolean;
  uid: string;
  revision: number;
  summary: string;
}

const EMPTY_DEFINITION = projectDefinitionSchema.parse({ tables: {}, apiVersions: {} });

function invalidDefinition(problems: Problem[]) {
  return errors.malformed(
    `The project definition has ${problems.length} problem(s): ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`,
    { problems },
  );
}

/** Parses and checks a definition as a PUT does: the definition, or every problem it has. */
export function examineDefinition(
  input: unknown,
  where: { account: string; project: string },
  checks: DefinitionChecks,
): { ok: true; definition: ProjectDefinition } | { ok: false; problems: Problem[] } {
  const parsed = parseProjectDefinition(input);
  if (!parsed.ok) return parsed;
  const badNames = definitionNameProblems(parsed.definition);
  if (badNames.length > 0) return { ok: false, problems: badNames };
  const compiled = compileProject(
    { ...UNSERVED_IDENTITY, account: where.account, name: where.project },
    parsed.definition,
    checks.checkFilter,
  );
  if (!compiled.ok) return { ok: false, problems: compiled.problems };
  return { ok: true, definition: parsed.definition };
}

/** Parses and checks a definition as a PUT does: 400/4001 listing every problem. */
export function checkDefinition(
  input: unknown,
  where: { account: string; project: string },
  checks: DefinitionChecks,
): ProjectDefinition {
  const examined = examineDefinition(input, where, checks);
  if (!examined.ok) throw invalidDefinition(examined.problems);
  return examined.definition;
}

/** 412/4121 unless the project as it is now (undefined: absent) is one the precondition accepts. */
export function checkPrecondition(
  precondition: Precondition | undefined,
  current: { uid: string; revision: number } | undefined,
) {
  if (!preconditionMet(precondition, current && projectTag(current))) {
    throw errors.preconditionFailed(
      current === undefined
        ? "The project does not exist, so it is at no revision the request names (If-Match)"
        : `The project is at revision ${current.revision}, not the one the request names (If-Match): someone changed it, or deleted and created it again, first`,
    );
  }
}

function definitionOf(stored: StoredProject | null): ProjectDefinition {
  if (!stored) return EMPTY_DEFINITION;
  const parsed = parseDefinitionStructure(stored.definition);
  return parsed.ok ? parsed.definition : EMPTY_DEFINITION;
}

/**
 * The definition with each masked secret replaced by the one stored now
 * (definition-secrets.ts): 400/4001 when a mask has nothing stored behind it.
 */
function withStoredSecrets(definition: ProjectDefinition, current: StoredProject | null): ProjectDefinition {
  const restored = restoreSecrets(definition, current?.definition);
  if (restored.problems.length > 0) throw invalidDefinition(restored.problems);
  return restored.definition;
}

/** What a change would do, without doing it (a dry run): the diff against the current definition. */
export async function previewProjectChange(
  meta: MetaStore,
  change: Pick<ProjectChange, "account" | "project" | "definition" | "precondition">,
): Promise<{ diff: DefinitionDiff; current: StoredProject | undefined }> {
  const current = await meta.getProject(change.account, change.project);
  checkPrecondition(change.precondition, current ?? undefined);
  return {
    diff: diffDefinitions(definitionOf(current), withStoredSecrets(change.definition, current)),
    current: current ?? undefined,
  };
}

export async function applyProjectChange(
  deps: ProjectChangeDeps,
  change: ProjectChange,
): Promise<AppliedChange> {
  const { account, project } = change;
  return holdProject(deps, account, project, async () => {
    await requireAccountIncarnation(deps.meta, account, change.accountUid);
    const current = await deps.meta.getProject(account, project);
    if (change.uid !== undefined && current?.uid !== change.uid) {
      throw errors.conflict("The project was deleted or created again meanwhile; nothing was changed");
    }
    if (change.mustCreate && current) {
      throw errors.conflict(`Project '${project}' exists already; an import makes a new project`);
    }
    checkPrecondition(change.precondition, current ?? undefined);
    const definition = withStoredSecrets(change.definition, current);
    const tablesBefore = Object.keys(definitionOf(current).tables).length;
    const tablesAfter = Object.keys(definition.tables).length;
    await deps.quotas?.checkCount(account, "tablesPerProject", tablesBefore, tablesAfter - tablesBefore);
    // A new project counts against the account's projects: creations of one account take turns.
    const quotas = deps.quotas;
    if (!current && quotas && (await quotas.limitOf(account, "projects")) !== null) {
      return holdProjectCreation(deps, account, async () => {
        await quotas.checkCount(account, "projects", (await deps.meta.listProjects(account)).length);
        return storeChange(deps, change, current, definition);
      });
    }
    return storeChange(deps, change, current, definition);
  });
}

/** Records the definition as the project's next revision (under the project's lease). */
async function storeChange(
  deps: ProjectChangeDeps,
  change: ProjectChange,
  current: StoredProject | null,
  definition: ProjectDefinition,
): Promise<AppliedChange> {
  const { account, project } = change;
  const diff = diffDefinitions(definitionOf(current), definition);
  const summary = change.describe ? change.describe(diff.summary) : diff.summary;
  if (current) await keepUnrecordedRevision(deps.revisions, current);
  const uid = current?.uid ?? randomUUID();
  const revision = (current?.revision ?? 0) + 1;
  await deps.revisions.save({
    account,
    project,
    projectUid: uid,
    revision,
    definition,
    by: change.by,
    at: new Date(),
    summary,
    requestId: change.requestId,
  });
  const stored = await deps.meta.writeProject(account, project, definition, {
    accountUid: change.accountUid,
    uid,
    revision: current?.revision ?? 0,
  });
  if (!stored) {
    throw errors.conflict("The project was changed by another request at the same time; try again");
  }
  await deps.projects.changed(account, project);
  await startIndexes(deps, account, project, definition);
  return { created: !current, uid, revision, summary };
}

/** Starts making the indexes the definition asks for (the change does not wait for them). */
async function startIndexes(
  deps: ProjectChangeDeps,
  account: string,
  project: string,
  definition: ProjectDefinition,
): Promise<void> {
  if (!deps.indexes) return;
  const stored = await deps.meta.getProjectWithStorage(account, project);
  // Always: applying a definition again is how a failed index is tried again.
  if (stored) void deps.indexes.applyRevision(stored, definitionIndexes(definition), { always: true });
}

/** 404/4041 unless the account exists and is still incarnation `accountUid`. */
export async function requireAccountIncarnation(
  meta: MetaStore,
  account: string,
  accountUid: string,
): Promise<void> {
  const doc = await meta.getAccount(account);
  if (!doc || meta.accountUid(doc) !== accountUid) throw errors.noAccount(account);
}

/** A project stored before its history was kept: its current revision is recorded first, by nobody known. */
async function keepUnrecordedRevision(revisions: RevisionStore, current: StoredProject): Promise<void> {
  if (await revisions.has(current.uid, current.revision)) return;
  await revisions.save({
    account: current.account,
    project: current.name,
    projectUid: current.uid,
    revision: current.revision,
    definition: current.definition,
    by: null,
    at: current.updatedAt ?? new Date(0),
    summary: "stored before the definition history was kept",
    requestId: null,
  });
}
