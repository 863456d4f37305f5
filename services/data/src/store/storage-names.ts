/**
 * Names of the storage that holds tenant rows. Each account created gets a
 * database name of its own and each project a collection prefix of its own,
 * both carrying a random incarnation id, chosen once and recorded in the
 * metadata; every data access uses the recorded names. A deleted account or
 * project therefore takes its names with it: a write still in flight when it
 * was deleted can only reach those dead names (which are swept afterwards),
 * never an account or project created later under the same name.
 *
 * Accounts and projects recorded before incarnation ids existed have no
 * recorded names and keep the ones derived from their names alone ("legacy"
 * names), so the data they hold stays readable.
 */
import { createHash, randomBytes } from "node:crypto";

/** Where one project's rows live: a database, and the prefix of its tables' collections. */
export interface TenantStorage {
  database: string;
  collectionPrefix: string;
}

export class StorageNames {
  readonly #databasePrefix: string;

  constructor(databasePrefix: string) {
    this.#databasePrefix = databasePrefix;
  }

  /** `<prefix><readable account>-<incarnation>`: `-` never occurs in a legacy name. */
  newDatabase(account: string): string {
    return `${this.#databasePrefix}${readable(account)}-${incarnationId()}`;
  }

  /** `<prefix><readable account>_<hash>`: case-folded, with a hash so `Acme` and `acme` never collide. */
  legacyDatabase(account: string): string {
    const hash = createHash("sha256").update(account).digest("hex").slice(0, 8);
    return `${this.#databasePrefix}${readable(account)}_${hash}`;
  }

  /** `<project>~<incarnation>.`: `~` is in no name, so no project's prefix starts another's. */
  newCollectionPrefix(project: string): string {
    return `${project}~${incarnationId()}.`;
  }

  legacyCollectionPrefix(project: string): string {
    return `${project}.`;
  }
}

/** The collection of one table of a project. */
export function collectionName(storage: TenantStorage, table: string): string {
  return `${storage.collectionPrefix}${table}`;
}

function readable(account: string): string {
  return account
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .slice(0, 30);
}

function incarnationId(): string {
  return randomBytes(6).toString("hex");
}
