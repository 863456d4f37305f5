/**
 * The identity fields of each project (see domain/login-identity.ts), learnt
 * from the data service once per project revision: a login asks the data
 * service only when the project is new to this process, or changed since. Every
 * login's answer carries the project's current settings, which keeps the cache
 * up to date without a round trip of its own.
 */
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

export function createIdentityFieldsCache(
  data: DataServiceClient,
  maxProjects = 10_000,
): ProjectIdentityFields {
  const entries = new Map<string, Entry>();
  const id = (account: string, project: string) => `${account}/${project}`;
  const remember = (key: string, entry: Entry) => {
    entries.delete(key);
    const oldest = entries.keys().next();
    if (entries.size >= maxProjects && !oldest.done) entries.delete(oldest.value);
    entries.set(key, entry);
  };

  return {
    async get(account, project, requestId) {
      const key = id(account, project);
      const cached = entries.get(key);
      if (cached) return cached;
      const settings = await data.settings(account, project, requestId);
      if (!settings) return null;
      if (settings.identityFields) {
        remember(key, { uid: settings.uid, revision: settings.revision, fields: settings.identityFields });
        return { fields: settings.identityFields };
      }
      // Not declared: the provider's login form says. A form that cannot be read now is not remembered.
      const form = await data.loginInfo(account, project, requestId).catch(() => null);
      const fields = form ? identityFieldsOfLoginForm(form) : undefined;
      if (form) remember(key, { uid: settings.uid, revision: settings.revision, fields });
      return { fields };
    },

    observe(settings) {
      const key = id(settings.account, settings.name);
      const cached = entries.get(key);
      if (!cached || (cached.uid === settings.uid && cached.revision === settings.revision)) return;
      if (settings.identityFields) {
        remember(key, { uid: settings.uid, revision: settings.revision, fields: settings.identityFields });
      } else {
        entries.delete(key);
      }
    },
  };
}
