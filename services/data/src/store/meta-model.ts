/**
 * Models of META_DB's collections: documents with string ids, no version key,
 * and every query carrying the same time limit (QUERY_TIMEOUT_MS) as queries on
 * tenant data.
 */
import mongoose, { type Connection, type Model, type SchemaDefinition } from "mongoose";

export function metaModel<T>(
  connection: Connection,
  queryTimeoutMs: number,
  model: { name: string; collection: string; minimize?: boolean },
  fields: SchemaDefinition<T>,
): Model<T> {
  const schema = new mongoose.Schema<T>(fields, {
    collection: model.collection,
    versionKey: false,
    minimize: model.minimize ?? true,
  });
  schema.pre(
    /^(find|count|update|delete|replace|distinct)/,
    function (this: mongoose.Query<unknown, unknown>) {
      this.maxTimeMS(queryTimeoutMs);
    },
  );
  return connection.model<T>(model.name, schema);
}
