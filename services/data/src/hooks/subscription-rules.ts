/**
 * What a webhook subscription may be (docs/webhooks.md): its body as the admin
 * API takes it, checked against the project (tables that exist, a filter of the
 * filter language valid on each of them), and the test an event must pass to be
 * delivered. A subscription is an account administrator's: it sees whole rows of
 * every table it names, narrowed only by its own filter, table and verb lists.
 */
import { z } from "zod";
import { ApiError, errors } from "../../../../shared/errors.ts";
import type { ProjectModel } from "../domain/model/project-model.ts";
import { tableSchema } from "../domain/read/query-builder.ts";
import { clientFilter } from "../domain/read/row-filters.ts";
import { compileCondition, parseFilter } from "../query/index.ts";
import type { FeedEvent, FeedVerb } from "../store/change-feed.ts";
import { rowMatcher } from "../store/mongo-filter.ts";

export const FEED_VERBS: readonly FeedVerb[] = ["INSERT", "UPDATE", "DELETE"];

export const subscriptionBody = z.strictObject({
  url: z.string().min(1).max(2048),
  tables: z.array(z.string().min(1).max(200)).min(1).max(200),
  verbs: z
    .array(z.enum(["INSERT", "UPDATE", "DELETE"]))
    .min(1)
    .max(3)
    .optional(),
  filter: z.string().max(4096).nullable().optional(),
  description: z.string().max(500).optional(),
});

export type SubscriptionBody = z.infer<typeof subscriptionBody>;

/** A PATCH of a subscription: any of the fields a POST takes, at least one. */
export const subscriptionChanges = subscriptionBody
  .partial()
  .refine((b) => Object.keys(b).length > 0, "name at least one of url, tables, verbs, filter, description");

export type SubscriptionChanges = z.infer<typeof subscriptionChanges>;

/** How long a rotated secret's predecessor goes on signing, in seconds: a day unless asked. */
export const PREVIOUS_SECRET_SECONDS = 86_400;

/** A secret rotation: how long the previous secret keeps signing beside the new one (0: not at all). */
export const secretRotationBody = z.strictObject({
  previousSecretSeconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .optional(),
});

/** A URL a delivery may go to, else the reason it may not (the egress policy checks the address at each delivery). */
export function webhookUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not a URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http or https URL";
  if (url.username || url.password) return "must not hold credentials (verify the signature instead)";
  if (url.hash) return "must not have a fragment";
  return undefined;
}

/**
 * What a subscription is sent of an event: the change, a leave (an update made a row its filter
 * admitted stop matching it: docs/webhooks.md), or nothing (null).
 */
export type Announcement = "change" | "leave";

/** The test of one subscription's events: table, verb and filter. */
export type EventTest = (event: FeedEvent) => Announcement | null;

/**
 * Compiles the subscription's test against `project`: 400/4001 for a table the project does not
 * have, 400/4002 for a filter that is not valid on one of its tables (globals included: a
 * subscription has no key to take them from).
 */
export function compileEventTest(
  project: ProjectModel,
  spec: { tables: string[]; verbs: readonly FeedVerb[]; filter: string | null },
): EventTest {
  const unknown = spec.tables.filter((t) => !project.tables.has(t));
  if (unknown.length > 0) throw errors.malformed(`Unknown table(s) in this project: ${unknown.join(", ")}`);
  const parsed = spec.filter === null ? null : parseWebhookFilter(spec.filter);
  const tests = new Map(
    spec.tables.flatMap((name) => {
      const table = project.tables.get(name);
      if (!table) return [];
      if (!parsed) return [[name, () => true] as const];
      try {
        return [[name, rowMatcher(clientFilter(compileCondition(parsed, tableSchema(table), {})))] as const];
      } catch (err) {
        if (err instanceof ApiError && err.statusCode < 500)
          throw errors.badFilter(`filter on table '${name}': ${err.message}`);
        throw err;
      }
    }),
  );
  const verbs = new Set(spec.verbs);
  return (event) => {
    const test = tests.get(event.table);
    if (test === undefined || !verbs.has(event.verb)) return null;
    const { row, oldRow } = event;
    if (row && test(row)) return "change";
    // A delete is tested on the row as it was; an update of a row that matched before is a leave.
    if (!oldRow || !test(oldRow)) return null;
    return event.verb === "DELETE" ? "change" : "leave";
  };
}

/**
 * The subscription's test under the project's definition as it is now, changed since the
 * subscription was made: tables the definition dropped take no events; 400/4002 (an ApiError)
 * when its filter is no longer valid on the tables left.
 */
export function currentEventTest(
  project: ProjectModel,
  spec: { tables: string[]; verbs: readonly FeedVerb[]; filter: string | null },
): EventTest {
  return compileEventTest(project, { ...spec, tables: spec.tables.filter((t) => project.tables.has(t)) });
}

/**
 * What keeps the subscription from delivering as made under the project's current definition
 * (changed since): tables it names that are gone (their changes are not sent), a filter no longer
 * valid (its events wait); null when nothing does.
 */
export function subscriptionProblem(
  project: ProjectModel,
  spec: { tables: string[]; verbs: readonly FeedVerb[]; filter: string | null },
): string | null {
  const problems: string[] = [];
  const gone = spec.tables.filter((t) => !project.tables.has(t));
  if (gone.length > 0)
    problems.push(`table(s) ${gone.join(", ")} no longer in the project: their changes are not sent`);
  try {
    currentEventTest(project, spec);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    problems.push(
      `${err.message}; its events wait until the filter is changed or the definition makes it valid again`,
    );
  }
  return problems.length > 0 ? problems.join("; ") : null;
}

function parseWebhookFilter(text: string) {
  try {
    return parseFilter(text);
  } catch (err) {
    if (err instanceof ApiError && err.statusCode < 500) throw errors.badFilter(err.message);
    throw err;
  }
}
