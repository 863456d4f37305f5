/** Names of accounts, projects, versions, tables and roles' table keys (docs/admin-api.md). */
export const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;

export function isValidName(name: string): boolean {
  return NAME_PATTERN.test(name);
}
