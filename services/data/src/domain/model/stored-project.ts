/**
 * A stored project's model: its definition (as the metadata store keeps it) parsed and compiled,
 * as the project cache asks for it once per revision and process. Compiling has one side effect,
 * named here: the tables' indexes of the definition are handed to `ensureIndexes` (in the
 * background), so that projects stored before their indexes existed get them too.
 */
import type { ProjectWithStorage } from "../../store/meta-store.ts";
import type { TenantStorage } from "../../store/storage-names.ts";
import type { TableIndex } from "../../store/tenant-rows.ts";
import { parseDefinitionStructure } from "../definition/project-definition.ts";
import { compileProject, type ProjectModel } from "./project-model.ts";
import { definitionIndexes } from "./table-indexes.ts";

/** Makes the storage's tables have these indexes (and no other of the platform's), in the background. */
export type EnsureIndexes = (storage: TenantStorage, wanted: Map<string, TableIndex[]>) => void;

/** The compiler of stored projects; each compiled revision ensures its tables' indexes. */
export function storedProjectCompiler(
  ensureIndexes: EnsureIndexes,
): (stored: ProjectWithStorage) => ProjectModel {
  return (stored) => {
    const parsed = parseDefinitionStructure(stored.definition);
    if (!parsed.ok) throw new Error(`stored definition of ${stored.account}/${stored.name} no longer parses`);
    const { account, name, uid, revision, storage } = stored;
    const compiled = compileProject({ account, name, uid, revision, storage }, parsed.definition);
    if (!compiled.ok)
      throw new Error(`stored definition of ${stored.account}/${stored.name} no longer compiles`);
    ensureIndexes(storage, definitionIndexes(parsed.definition));
    return compiled.model;
  };
}
