/**
 * The admin API's answers and bodies as they travel (docs/admin-api.md). The data
 * service types its views with them and the console reads them, so both sides
 * name one shape. Types and plain constants only: nothing here may import server
 * code, because the console's browser build imports this file.
 */

/** Who made a change (an audit entry's `actor`, a revision's `by`). */
export type ActorView = { kind: "operator" } | { kind: "admin"; login: string; role: string };

export interface AccountView {
  name: string;
  displayName: string | null;
  created: string | null;
  projects?: string[];
  rateLimits?: { account: number | null; key: number | null };
}

export interface AdminView {
  login: string;
  role: string;
  created: string | null;
  updated: string | null;
}

/** `PUT …/admins/{login}`: `password` is required to create one, optional to change one. */
export interface AdminBody {
  password?: string;
  role: string;
}

export interface ProjectSummaryView {
  name: string;
  revision: number;
  updated: string | null;
}

export interface ProjectView {
  name: string;
  revision: number;
  definition: Record<string, unknown>;
}

/** What a definition PUT, a rollback and a project DELETE answer. */
export interface ProjectChangeView {
  name: string;
  revision: number;
  summary: string;
}

export interface RevisionView {
  revision: number;
  by: ActorView | null;
  at: string | null;
  summary: string;
}

export interface RevisionWithDefinitionView extends RevisionView {
  definition: unknown;
}

export interface UserView {
  username: string;
  roles: string[];
  globals: Record<string, unknown>;
  keyLifetimeSeconds: number | null;
}

/** `PUT …/users/{username}`: `password` is required to create a user, optional to change one. */
export interface UserBody {
  password?: string;
  roles: string[];
  globals?: Record<string, unknown>;
  keyLifetimeSeconds?: number;
}

export interface ApiKeyView {
  id: string;
  name: string;
  kind: string;
  status: string;
  roles: string[];
  expiration: string | null;
  userIdentifier?: string | null;
  description?: string | null;
  created?: string;
  /** Only in the answer that created the key. */
  apikey?: string;
}

export interface ApiKeyBody {
  name: string;
  roles: string[];
  description?: string;
  expiration?: string;
  globals?: Record<string, unknown>;
  userIdentifier?: string;
  apikey?: string;
}

export interface AuditEntryView {
  id: string;
  at: string | null;
  account: string | null;
  incarnation: string | null;
  actor: ActorView;
  method: string;
  path: string;
  summary: string;
  status: number;
  errorCode?: number;
  requestId: string;
  clientRequestId?: string;
}

/** What an administrator's `@authentication` answers a login (and a password change). */
export interface AdminLoginView {
  apikey: string;
  expiration: string | null;
  userIdentifier: string;
  roles: string[];
  changePasswordResult?: "success" | "failure";
  changePasswordMessage?: string;
}

/** The kinds of change the audit listings filter by (`kind=`): what the path names. */
export const AUDIT_KINDS = ["account", "admin", "project", "user", "apikey"] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

/** The order of the audit and revision listings (`order=`): oldest first is the default. */
export const LISTING_ORDERS = ["oldest", "newest"] as const;
export type ListingOrder = (typeof LISTING_ORDERS)[number];

/** `by=` of the audit and revision listings: the operator's changes, or one administrator's. */
export function byParam(actor: ActorView): string {
  return actor.kind === "operator" ? "operator" : `admin:${actor.login}`;
}

/** The limits a plan sets (docs/operations.md#plans-and-quotas); null: no limit. */
export const PLAN_LIMIT_NAMES = [
  "storedBytes",
  "rowsPerTable",
  "projects",
  "tablesPerProject",
  "usersPerProject",
  "apiKeysPerProject",
  "webhooksPerProject",
  "liveStreams",
  "requestsPerWindow",
  "sandboxCpuMs",
] as const;
export type PlanLimitName = (typeof PLAN_LIMIT_NAMES)[number];
export type PlanLimitsView = Record<PlanLimitName, number | null>;

export interface PlanView {
  name: string;
  limits: PlanLimitsView;
  source: "builtin" | "configuration" | "api";
}

/** `GET/PUT …/accounts/{a}/plan`. */
export interface AccountPlanView {
  plan: string;
  overrides: Partial<PlanLimitsView>;
  limits: PlanLimitsView;
}

export const USAGE_REQUEST_KINDS = ["read", "write", "stream", "admin"] as const;
export const USAGE_STATUS_CLASSES = ["2xx", "3xx", "4xx", "5xx"] as const;
export const USAGE_DELIVERY_OUTCOMES = ["delivered", "failed", "dead"] as const;

export interface UsageWarningView {
  limit: PlanLimitName;
  /** `warning` from 80 % of the limit, `full` at it (nothing more may be added). */
  state: "warning" | "full";
  used: number;
  value: number;
  project?: string;
  table?: string;
}

export interface UsagePointView {
  at: string;
  requests: Record<
    (typeof USAGE_REQUEST_KINDS)[number],
    Record<(typeof USAGE_STATUS_CLASSES)[number], number>
  >;
  sandboxCpuMs: number;
  webhookDeliveries: Record<(typeof USAGE_DELIVERY_OUTCOMES)[number], number>;
  liveStreamMinutes: number;
  /** The last measurement within the step; null when none was made in it. */
  storedBytes: number | null;
  rows: number | null;
  projects: Record<
    string,
    { requests: number; liveStreamMinutes: number; storedBytes: number | null; rows: number | null }
  >;
}

/** `GET …/accounts/{a}/usage?from&to&step`. */
export interface UsageView {
  account: string;
  plan: string;
  limits: PlanLimitsView;
  overridden: PlanLimitName[];
  current: {
    measuredAt: string | null;
    storedBytes: number | null;
    rows: number | null;
    projects: number;
    byProject: Record<
      string,
      {
        tables: number;
        users: number | null;
        /** API keys in force (apiKeysPerProject counts them). */
        apiKeys: number | null;
        /** Webhook subscriptions (null: the change feed is off). */
        webhooks: number | null;
        byTable: Record<string, { rows: number; bytes: number }>;
      }
    >;
  };
  warnings: UsageWarningView[];
  series: { from: string; to: string; step: number; points: UsagePointView[] };
}

/** The events a webhook subscription delivers, in their canonical order. */
export const WEBHOOK_VERBS = ["INSERT", "UPDATE", "DELETE"] as const;
export type WebhookVerb = (typeof WEBHOOK_VERBS)[number];

/** A subscription's circuit (docs/webhooks.md#isolation-and-the-circuit). */
export interface WebhookCircuitView {
  state: "closed" | "open" | "half-open";
  timeoutsInARow: number;
  opened: string | null;
  nextProbe: string | null;
}

/** A webhook subscription: what a PATCH answers. */
export interface WebhookView {
  id: string;
  url: string;
  tables: string[];
  verbs: WebhookVerb[];
  filter: string | null;
  description: string;
  created: string;
  /** While a rotated secret's predecessor still signs: until when. */
  previousSecretExpires: string | null;
}

/** A subscription as listed: what the project's current definition keeps it from doing, and its circuit. */
export interface WebhookListedView extends WebhookView {
  problem: string | null;
  circuit: WebhookCircuitView;
}

/** `GET …/webhooks/{id}`: as listed, with the events waiting for a retry and the dead letters counted. */
export interface WebhookDetailView extends WebhookListedView {
  retrying: number;
  deadLetters: number;
}

/** What the POST that made a subscription and a secret rotation answer: the signing secret, this once. */
export interface WebhookWithSecretView extends WebhookView {
  secret: string;
}

/** `POST …/webhooks`; a PATCH takes any of its fields (`WebhookChanges`). */
export interface WebhookBody {
  url: string;
  tables: string[];
  verbs?: WebhookVerb[];
  filter?: string | null;
  description?: string;
}

export type WebhookChanges = Partial<WebhookBody>;

/** `POST …/webhooks/{id}/secret`: how long the previous secret goes on signing (0: not at all). */
export interface WebhookRotationBody {
  previousSecretSeconds?: number;
}

/** One attempt in a subscription's delivery log (`GET …/webhooks/{id}/deliveries`). */
export interface DeliveryAttemptView {
  at: string | null;
  outcome: "delivered" | "failed" | "dead" | "lost";
  webhookId: string | null;
  position: string | null;
  attempt: number;
  status: number | null;
  latencyMs: number | null;
  error?: string;
}

/** A dead letter (`GET …/webhooks/{id}/deadletters`): an event that ran out of retries. */
export interface DeadLetterView {
  webhookId: string;
  position: string;
  type: string;
  attempts: number;
  firstAttempt: string | null;
  parked: string | null;
  lastStatus: number | null;
  lastError: string | null;
  payload: unknown;
}

/** What a replay of dead letters (one or all) answers. */
export interface ReplayView {
  id: string;
  replayed: number;
}

/** What deleting a subscription answers. */
export interface WebhookDeletedView {
  id: string;
  deleted: true;
}
