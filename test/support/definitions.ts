/**
 * Project definitions shared by integration tests. ITEM_PROJECT: one table `item` (string key `id`,
 * a `note`), one API version and a role with full access to every table.
 */
export const ITEM_PROJECT = {
  tables: {
    item: {
      key: ["id"],
      columns: { id: { type: "string", required: true }, note: { type: "string" } },
    },
  },
  apiVersions: { v1: {} },
  roles: { "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
};
