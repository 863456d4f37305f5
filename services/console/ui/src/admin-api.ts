/**
 * The admin API as the console uses it: one typed function per call, its paths built
 * in one place (every name encoded), its answers typed by the wire types the data
 * service answers with (shared/contracts/admin-api.ts).
 */
import type {
  AccountView,
  AdminBody,
  AdminLoginView,
  AdminView,
  ApiKeyBody,
  ApiKeyView,
  DeadLetterView,
  DeliveryAttemptView,
  ProjectChangeView,
  ProjectSummaryView,
  ProjectView,
  ReplayView,
  RevisionWithDefinitionView,
  UsageView,
  UserBody,
  UserView,
  WebhookBody,
  WebhookChanges,
  WebhookListedView,
  WebhookRotationBody,
  WebhookView,
  WebhookWithSecretView,
} from "../../../../shared/contracts/admin-api.ts";
import { anonymous, type Client, seg } from "./api.ts";

export type {
  AccountView,
  ActorView,
  AdminView,
  ApiKeyView,
  AuditEntryView,
  AuditKind,
  DeadLetterView,
  DeliveryAttemptView,
  ListingOrder,
  ProjectSummaryView,
  RevisionView,
  RevisionWithDefinitionView,
  UsagePointView,
  UsageView,
  UsageWarningView,
  UserView,
  WebhookCircuitView,
  WebhookListedView,
  WebhookVerb,
  WebhookView,
  WebhookWithSecretView,
} from "../../../../shared/contracts/admin-api.ts";
export { AUDIT_KINDS, byParam, WEBHOOK_VERBS } from "../../../../shared/contracts/admin-api.ts";

/** A project as loaded for editing: its definition and the ETag to send back as If-Match. */
export interface LoadedProject extends ProjectView {
  etag: string;
}

/** The filters of a listing (audit trail, revisions), as query parameters. */
export function listingQuery(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
  return query.toString();
}

const ifMatch = (etag: string | undefined): Record<string, string> => (etag ? { "if-match": etag } : {});

/** The JSON Schema every project definition is checked against (the same for every administrator). */
export async function definitionSchema<T>(client: Client): Promise<T> {
  return (await client.call<T>("GET", "/admin/v1/definition-schema")).body;
}

export function adminApi(client: Client, account: string) {
  const accountPath = `/admin/v1/accounts/${seg(account)}`;
  const projectPath = (project: string) => `${accountPath}/projects/${seg(project)}`;
  const webhookPath = (project: string, id: string) => `${projectPath(project)}/webhooks/${seg(id)}`;
  const get = async <T>(path: string, signal?: AbortSignal) =>
    (await client.call<T>("GET", path, { signal })).body;

  return {
    accountPath,
    account: {
      get: (signal?: AbortSignal) => get<AccountView>(accountPath, signal),
      rename: async (displayName: string) =>
        (await client.call<AccountView>("PUT", accountPath, { body: { displayName } })).body,
    },
    admins: {
      list: (signal?: AbortSignal) => get<AdminView[]>(`${accountPath}/admins`, signal),
      put: (login: string, body: AdminBody) =>
        client.call<AdminView>("PUT", `${accountPath}/admins/${seg(login)}`, { body }),
      remove: (login: string) => client.call("DELETE", `${accountPath}/admins/${seg(login)}`),
    },
    /** The account's plan, current use, warnings and series (`query`: from, to, step). */
    usage: (query: string, signal?: AbortSignal) => get<UsageView>(`${accountPath}/usage?${query}`, signal),
    /** The first page of the audit trail with these filters (`usePaged` follows `next_batch`). */
    auditPath: (query: string) => `${accountPath}/audit?${query}`,
    projects: {
      list: (signal?: AbortSignal) => get<ProjectSummaryView[]>(`${accountPath}/projects`, signal),
      get: async (project: string, signal?: AbortSignal): Promise<LoadedProject> => {
        const r = await client.call<ProjectView>("GET", projectPath(project), { signal });
        return { ...r.body, etag: r.headers.get("etag") ?? "" };
      },
      /** What storing this definition would change, stored nowhere; with `etag`, 412 when the project moved on. */
      dryRun: async (project: string, definition: unknown, etag?: string) =>
        (
          await client.call<Record<string, unknown>>("PUT", `${projectPath(project)}?dryRun=true`, {
            body: definition,
            headers: ifMatch(etag),
          })
        ).body,
      /** Stores the definition as the project's next revision (creates the project without `etag`). */
      store: async (project: string, definition: unknown, etag?: string) =>
        (
          await client.call<ProjectChangeView>("PUT", projectPath(project), {
            body: definition,
            headers: ifMatch(etag),
          })
        ).body,
      /** Deletes the project as it was loaded (`etag`): 412 when someone changed it since. */
      remove: (project: string, etag: string) =>
        client.call("DELETE", projectPath(project), { headers: { "if-match": etag } }),
    },
    revisions: {
      /** The first page of a project's revisions with these filters. */
      path: (project: string, query: string) => `${projectPath(project)}/revisions?${query}`,
      get: (project: string, revision: number) =>
        get<RevisionWithDefinitionView>(`${projectPath(project)}/revisions/${revision}`),
      rollBack: async (project: string, revision: number, etag: string) =>
        (
          await client.call<ProjectChangeView>("POST", `${projectPath(project)}/rollback`, {
            body: { revision },
            headers: { "if-match": etag },
          })
        ).body,
    },
    users: {
      list: (project: string, signal?: AbortSignal) =>
        get<UserView[]>(`${projectPath(project)}/users`, signal),
      put: (project: string, username: string, body: UserBody) =>
        client.call<UserView>("PUT", `${projectPath(project)}/users/${seg(username)}`, { body }),
      remove: (project: string, username: string) =>
        client.call("DELETE", `${projectPath(project)}/users/${seg(username)}`),
    },
    keys: {
      list: (project: string, signal?: AbortSignal) =>
        get<ApiKeyView[]>(`${projectPath(project)}/apikeys`, signal),
      create: async (project: string, body: ApiKeyBody) =>
        (await client.call<ApiKeyView>("POST", `${projectPath(project)}/apikeys`, { body })).body,
      remove: (project: string, id: string) =>
        client.call("DELETE", `${projectPath(project)}/apikeys/${seg(id)}`),
    },
    webhooks: {
      list: (project: string, signal?: AbortSignal) =>
        get<WebhookListedView[]>(`${projectPath(project)}/webhooks`, signal),
      create: async (project: string, body: WebhookBody) =>
        (await client.call<WebhookWithSecretView>("POST", `${projectPath(project)}/webhooks`, { body })).body,
      change: async (project: string, id: string, body: WebhookChanges) =>
        (await client.call<WebhookView>("PATCH", webhookPath(project, id), { body })).body,
      /** A new signing secret (answered this once); the previous one signs beside it for a while. */
      rotate: async (project: string, id: string, body: WebhookRotationBody) =>
        (await client.call<WebhookWithSecretView>("POST", `${webhookPath(project, id)}/secret`, { body }))
          .body,
      remove: (project: string, id: string) => client.call("DELETE", webhookPath(project, id)),
      /** The subscription's latest delivery attempts, newest first (at most `count`). */
      deliveries: (project: string, id: string, count: number, signal?: AbortSignal) =>
        get<DeliveryAttemptView[]>(`${webhookPath(project, id)}/deliveries?pagesize=${count}`, signal),
      deadLetters: (project: string, id: string, signal?: AbortSignal) =>
        get<DeadLetterView[]>(`${webhookPath(project, id)}/deadletters`, signal),
      /** Sends a dead letter again (`webhookId`), or all of them (null). */
      replay: async (project: string, id: string, webhookId: string | null) => {
        const letters = `${webhookPath(project, id)}/deadletters`;
        const path = webhookId === null ? `${letters}/replay` : `${letters}/${seg(webhookId)}/replay`;
        return (await client.call<ReplayView>("POST", path)).body;
      },
    },
    /** An API version's OpenAPI document (the data API's `@docs`). */
    docsPath: (project: string, version: string) =>
      `/rest/${seg(account)}/${seg(project)}/${seg(version)}/@docs`,
  };
}

export type AdminApi = ReturnType<typeof adminApi>;

/** An administrator's sign-in (a new admin key every time). */
export async function adminLogin(account: string, login: string, password: string): Promise<AdminLoginView> {
  const path = `/admin/v1/accounts/${seg(account)}/@authentication`;
  return (await anonymous.call<AdminLoginView>("POST", path, { body: { username: login, password } })).body;
}

/**
 * An administrator's own password change: a login with `newPassword`. It answers a new
 * key, which works; when the change succeeded every other key of the administrator
 * (the session's too) stopped working.
 */
export async function changeOwnPassword(
  account: string,
  login: string,
  password: string,
  newPassword: string,
): Promise<AdminLoginView> {
  const path = `/admin/v1/accounts/${seg(account)}/@authentication?enablePasswordChange!`;
  return (
    await anonymous.call<AdminLoginView>("POST", path, { body: { username: login, password, newPassword } })
  ).body;
}

/** Disables an admin key (it is refused from the next request on). */
export async function disableAdminKey(account: string, apikey: string): Promise<void> {
  const path = `/admin/v1/accounts/${seg(account)}/@authentication`;
  await anonymous.call("POST", path, { body: { apikey, disable: true } });
}
