/**
 * Models of META_DB's collections: documents with string ids, no version key,
 * every query carrying the same time limit (QUERY_TIMEOUT_MS) as queries on
 * tenant data, and the indexes their queries need (made at start-up by
 * createMetaIndexes, not by mongoose's autoIndex).
 */
import mongoose, { type Connection, type Model, type SchemaDefinition } from "mongoose";
import type { Logger } from "../../../../shared/logger.ts";

export function metaModel<T>(
  connection: Connection,
  queryTimeoutMs: number,
  model: { name: string; collection: string; minimize?: boolean; indexes?: Record<string, 1>[] },
  fields: SchemaDefinition<T>,
): Model<T> {
  const schema = new mongoose.Schema<T>(fields, {
    collection: model.collection,
    versionKey: false,
    minimize: model.minimize ?? true,
  });
  for (const index of model.indexes ?? []) schema.index(index);
  schema.pre(
    /^(find|count|update|delete|replace|distinct)/,
    function (this: mongoose.Query<unknown, unknown>) {
      this.maxTimeMS(queryTimeoutMs);
    },
  );
  return connection.model<T>(model.name, schema);
}

/**
 * Makes the indexes every model of the connection declares (idempotent; a model's indexes that
 * exist already are left as they are). Never throws: a failure is logged and the queries still
 * work, only slower.
 */
export async function createMetaIndexes(connection: Connection, logger: Logger): Promise<void> {
  for (const name of connection.modelNames()) {
    try {
      await connection.model(name).createIndexes();
    } catch (err) {
      logger.warn({ err, model: name }, "could not make the indexes of a metadata collection");
    }
  }
}
