/**
 * Changing a project's definition, the one way every change goes (PUT, rollback)
 * and the way a dry run previews it: the definition is checked whole (every
 * problem in one 400), compared with the current one (definition-diff.ts, whose
 * summary the revision history and the audit show), and stored as the next
 * revision together with its history record. Changes of one project are
 * serialised (a Redis lease), so a precondition on the revision (`If-Match`)
 * holds until the write: of two changes made against the same revision, one
 * fails with 412.
 */
import { randomUUID } from "node:crypto";
import type { AuditActor } from "../../../../shared/admin-access/audit.ts";
import { errors } from "../../../../shared/errors.ts";
import type { Leases } from "../store/leases.ts";
import type { MetaStore, StoredProject } from "../store/meta-store.ts";
import type { ProjectCache } from "../store/project-cache.ts";
import type { RevisionStore } from "../store/revision-store.ts";
import type { TenantStorage } from "../store/storage-names.ts";
import type { TableIndex } from "../store/tenant-rows.ts";
import { type DefinitionDiff, diffDefinitions } from "./definition-diff.ts";
import type { Problem } from "./problems.ts";
import {
  type ProjectDefinition,
  parseProjectDefinition,
  projectDefinitionSchema,
  UNSERVED_IDENTITY,
} from "./project-definition.ts";
import { compileProject, type FilterChecker, type ProjectModel } from "./project-model.ts";
import { definitionIndexes } from "./table-indexes.ts";

export interface DefinitionChecks {
  checkFilter: FilterChecker;
  /** Runs once a definition compiled (e.g. the logic engine's own checks); returns problems. */
  checkModel?: (model: ProjectModel) => Problem[];
}

/** What `If-Match` asks of the project's current revision. */
export type RevisionPrecondition = { anyRevision: true } | { revisions: number[] };

/** Makes a project's store indexes (store/table-index-store.ts), in the background; never throws. */
export interface IndexMaker {
  apply(storage: TenantStorage, wanted: Map<string, TableIndex[]>): Promise<void>;
}

export interface ProjectChangeDeps {
  meta: MetaStore;
  revisions: RevisionStore;
  projects: ProjectCache<ProjectModel>;
  leases: Leases;
  indexes?: IndexMaker;
}

export interface ProjectChange {
  account: string;
  project: string;
  definition: ProjectDefinition;
  precondition?: RevisionPrecondition;
  /** Only if the project is still this incarnation (a rollback to one of its revisions). */
  uid?: string;
  by: AuditActor;
  requestId: string;
  /** The summary recorded, from the diff's summary line (default: that line). */
  describe?: (diffSummary: string) => string;
}

export interface AppliedChange {
  created: boolean;
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

/** Parses and checks a definition as a PUT does: 400/4001 listing every problem. */
export function checkDefinition(
  input: unknown,
  where: { account: string; project: string },
  checks: DefinitionChecks,
): ProjectDefinition {
  const parsed = parseProjectDefinition(input);
  if (!parsed.ok) throw invalidDefinition(parsed.problems);
  const compiled = compileProject(
    { ...UNSERVED_IDENTITY, account: where.account, name: where.project },
    parsed.definition,
    checks.checkFilter,
  );
  if (!compiled.ok) throw invalidDefinition(compiled.problems);
  const more = checks.checkModel?.(compiled.model) ?? [];
  if (more.length > 0) throw invalidDefinition(more);
  return parsed.definition;
}

/** 412/4121 unless the project's current revision (undefined: none) is one the precondition accepts. */
export function checkPrecondition(
  precondition: RevisionPrecondition | undefined,
  current: number | undefined,
) {
  if (precondition === undefined) return;
  const met =
    current !== undefined && ("anyRevision" in precondition || precondition.revisions.includes(current));
  if (!met) {
    throw errors.preconditionFailed(
      current === undefined
        ? "The project does not exist, so it is at no revision the request names (If-Match)"
        : `The project is at revision ${current}, not the one the request names (If-Match): someone changed it first`,
    );
  }
}

function definitionOf(stored: StoredProject | null): ProjectDefinition {
  if (!stored) return EMPTY_DEFINITION;
  const parsed = parseProjectDefinition(stored.definition);
  return parsed.ok ? parsed.definition : EMPTY_DEFINITION;
}

/** What a change would do, without doing it (a dry run): the diff against the current definition. */
export async function previewProjectChange(
  meta: MetaStore,
  change: Pick<ProjectChange, "account" | "project" | "definition" | "precondition">,
): Promise<{ diff: DefinitionDiff; currentRevision: number | undefined }> {
  const current = await meta.getProject(change.account, change.project);
  checkPrecondition(change.precondition, current?.revision);
  return {
    diff: diffDefinitions(definitionOf(current), change.definition),
    currentRevision: current?.revision,
  };
}

export async function applyProjectChange(
  deps: ProjectChangeDeps,
  change: ProjectChange,
): Promise<AppliedChange> {
  const { account, project } = change;
  return deps.leases.hold(`project:${account}/${project}`, async () => {
    const current = await deps.meta.getProject(account, project);
    if (change.uid !== undefined && current?.uid !== change.uid) {
      throw errors.conflict("The project was deleted or created again meanwhile; nothing was changed");
    }
    checkPrecondition(change.precondition, current?.revision);
    const diff = diffDefinitions(definitionOf(current), change.definition);
    const summary = change.describe ? change.describe(diff.summary) : diff.summary;
    if (current) await keepUnrecordedRevision(deps.revisions, current);
    const uid = current?.uid ?? randomUUID();
    const revision = (current?.revision ?? 0) + 1;
    await deps.revisions.save({
      account,
      project,
      projectUid: uid,
      revision,
      definition: change.definition,
      by: change.by,
      at: new Date(),
      summary,
      requestId: change.requestId,
    });
    const stored = await deps.meta.writeProject(account, project, change.definition, {
      uid,
      revision: current?.revision ?? 0,
    });
    if (!stored) {
      throw errors.conflict("The project was changed by another request at the same time; try again");
    }
    await deps.projects.changed(account, project);
    await startIndexes(deps, account, project, change.definition);
    return { created: !current, revision, summary };
  });
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
  if (stored) void deps.indexes.apply(stored.storage, definitionIndexes(definition));
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
