/**
 * A stored project's model: its definition (as the metadata store keeps it) compiled, or its
 * compilation shared with projects of the same definition text (shared-models.ts), as the project
 * cache asks for it. Compiling has one side effect, named here: the tables' indexes of the
 * definition are handed to `ensureIndexes` (in the background; once per revision and process), so
 * that projects stored before their indexes existed get them too.
 */
import type { ProjectWithStorage } from "../../store/meta-store.ts";
import type { TableIndex } from "../../store/tenant-rows.ts";
import type { ProjectModel } from "./project-model.ts";
import type { SharedModels } from "./shared-models.ts";
import { definitionIndexes } from "./table-indexes.ts";

/** Makes the project's tables have these indexes (and no other of the platform's), in the background. */
export type EnsureIndexes = (project: ProjectWithStorage, wanted: Map<string, TableIndex[]>) => void;

/** The compiler of stored projects; each compiled revision ensures its tables' indexes. */
export function storedProjectCompiler(
  models: SharedModels,
  ensureIndexes: EnsureIndexes,
): (stored: ProjectWithStorage) => ProjectModel {
  return (stored) => {
    const { account, name, uid, revision, storage } = stored;
    const model = models.model(
      { account, name, uid, revision, storage },
      stored.definition,
      `${account}/${name}`,
    );
    ensureIndexes(stored, definitionIndexes(model.definition));
    return model;
  };
}
