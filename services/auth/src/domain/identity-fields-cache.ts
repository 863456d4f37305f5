/**
 * The identity fields of each project (see domain/login-identity.ts), learnt
 * from the data service once per project revision: a login asks the data
 * service only when the project is new to this process, or changed since. Every
 * login's answer carries the project's current settings, which keeps the cache
 * up to date without a round trip of its own. It is bounded by memory (the shared
 * per-account cache): many projects thin it out, least recently used first.
 */
import { PER_ACCOUNT_CACHE_BYTES, perAccountCache } from "../../../../shared/cache/per-account-cache.ts";
import type { ProjectSettings } from "../../../../shared/contracts/internal-api.ts";
import type { DataServiceClient } from "../clients/data-service-client.ts";
import { identityFieldsOfLoginForm } from "./login-identity.ts";

interface Entry {
  uid: string;
  revision: number;
  fields: string[] | undefined;
}

export interface ProjectIdentityFields {
  /** `null`: no such project. `fields` undefined: the whole credential set is the identity. */
  get(account: string, project: string, requestId: string): Promise<{ fields: string[] | undefined } | null>;
  /** Told the project's current settings (from a login's answer). */
  observe(settings: ProjectSettings): void;
}

/** What an entry holds beyond the cache's own node: its object, uid and field names (two bytes a character). */
function entryBytes(entry: Entry): number {
  const names = entry.fields?.reduce((sum, field) => sum + 32 + 2 * field.length, 0) ?? 0;
  return 64 + 2 * entry.uid.length + names;
}

export function createIdentityFieldsCache(
  data: DataServiceClient,
  budgetBytes = PER_ACCOUNT_CACHE_BYTES,
): ProjectIdentityFields {
  const entries = perAccountCache<Entry>(budgetBytes, entryBytes);
  const id = (account: string, project: string) => `${account}/${project}`;

  return {
    async get(account, project, requestId) {
      const key = id(account, project);
      const cached = entries.get(key);
      if (cached) return { fields: cached.fields };
      const settings = await data.settings(account, project, requestId);
      if (!settings) return null;
      if (settings.identityFields) {
        entries.set(key, { uid: settings.uid, revision: settings.revision, fields: settings.identityFields });
        return { fields: settings.identityFields };
      }
      // Not declared: the provider's login form says. A form that cannot be read now is not remembered.
      const form = await data.loginInfo(account, project, requestId).catch(() => null);
      const fields = form ? identityFieldsOfLoginForm(form) : undefined;
      if (form) entries.set(key, { uid: settings.uid, revision: settings.revision, fields });
      return { fields };
    },

    observe(settings) {
      const key = id(settings.account, settings.name);
      const cached = entries.get(key);
      if (!cached || (cached.uid === settings.uid && cached.revision === settings.revision)) return;
      if (settings.identityFields) {
        entries.set(key, { uid: settings.uid, revision: settings.revision, fields: settings.identityFields });
      } else {
        entries.delete(key);
      }
    },
  };
}
