/**
 * A project's webhook subscriptions (docs/webhooks.md): made and removed by the
 * operator and the account's admins, read by its readers too; an admin changes
 * what one delivers (PATCH) without losing its queue. The secret that signs the
 * deliveries is answered once, by the POST that made it or the one that rotated
 * it (the previous secret signs beside the new one for a while, a day by default). Each
 * subscription has its delivery log and its dead letters, which an admin sends
 * again (replay) or drops. Subscriptions belong to the project's incarnation: a
 * project deleted and created again has none of its predecessor's.
 */
import { randomBytes } from "node:crypto";
import type Router from "@koa/router";
import type { Context } from "koa";
import { noteAudit } from "../../../../../shared/admin-access/audit.ts";
import type {
  DeadLetterView,
  DeliveryAttemptView,
  ReplayView,
  WebhookBody,
  WebhookChanges,
  WebhookCircuitView,
  WebhookDeletedView,
  WebhookDetailView,
  WebhookListedView,
  WebhookView,
  WebhookWithSecretView,
} from "../../../../../shared/contracts/admin-api.ts";
import { ApiError, ErrorCode, errors } from "../../../../../shared/errors.ts";
import { readJsonBody, readOptionalJsonBody } from "../../../../../shared/http/json-body.ts";
import { parseBody } from "../../../../../shared/http/parse-body.ts";
import { countRefusal } from "../../../../../shared/quotas/plans.ts";
import type { ProjectModel } from "../../domain/model/project-model.ts";
import { intParam, parseQueryString } from "../../domain/read/query-params.ts";
import { type Circuit, parseCircuit } from "../../hooks/circuit.ts";
import { egressProblem } from "../../hooks/egress.ts";
import { newWebhookSecret } from "../../hooks/signature.ts";
import {
  compileEventTest,
  FEED_VERBS,
  PREVIOUS_SECRET_SECONDS,
  secretRotationBody,
  subscriptionBody,
  subscriptionChanges,
  subscriptionProblem,
  webhookUrlProblem,
} from "../../hooks/subscription-rules.ts";
import type { FeedVerb } from "../../store/change-feed.ts";
import type {
  DeadLetter,
  DeliveryLogEntry,
  WebhookStore,
  WebhookSubscription,
} from "../../store/webhook-store.ts";
import { type AdminRouteDeps, isoTime, requireProject, type WebhookAdminDeps } from "./deps.ts";
import { nameParam } from "./params.ts";

const LOG_PAGE_DEFAULT = 50;

const subscriptionView = (s: WebhookSubscription, now = Date.now()): WebhookView => ({
  id: s.id,
  url: s.url,
  tables: s.tables,
  verbs: s.verbs,
  filter: s.filter,
  description: s.description,
  created: s.created,
  previousSecretExpires:
    s.previousSecret && s.previousSecret.until > now ? isoTime(new Date(s.previousSecret.until)) : null,
});

/** A subscription's circuit as the admin API shows it (hooks/circuit.ts). */
const circuitView = (c: Circuit): WebhookCircuitView => ({
  state: c.state,
  timeoutsInARow: c.timeouts,
  opened: c.openedAt === null ? null : isoTime(new Date(c.openedAt)),
  nextProbe: c.state === "open" && c.until !== null ? isoTime(new Date(c.until)) : null,
});

const logView = (e: DeliveryLogEntry): DeliveryAttemptView => ({
  at: isoTime(new Date(e.at)),
  outcome: e.outcome,
  webhookId: e.webhookId,
  position: e.position,
  attempt: e.attempt,
  status: e.status,
  latencyMs: e.latencyMs,
  ...(e.error === null ? {} : { error: e.error }),
});

const deadView = (d: DeadLetter): DeadLetterView => ({
  webhookId: d.webhookId,
  position: d.position,
  type: d.type,
  attempts: d.attempts,
  firstAttempt: isoTime(new Date(d.firstAttemptAt)),
  parked: isoTime(new Date(d.parkedAt)),
  lastStatus: d.lastStatus,
  lastError: d.lastError,
  payload: JSON.parse(d.body) as unknown,
});

/** A subscription id as the POST makes them (`wh_` and 24 hex digits); anything else is no subscription. */
const SUBSCRIPTION_ID = /^wh_[0-9a-f]{24}$/;
const WEBHOOK_ID = /^msg_wh_[0-9a-f]{24}_\d{1,20}-\d{1,20}$/;

/** The audit trail's words for a PATCH: the fields it set (the URL and the filter shown shortened). */
function changeSummary(body: WebhookChanges): string {
  const parts: string[] = [];
  if (body.url !== undefined) parts.push(`url ${body.url.slice(0, 200)}`);
  if (body.tables !== undefined) parts.push(`tables [${body.tables.join(", ")}]`);
  if (body.verbs !== undefined) parts.push(`verbs [${body.verbs.join(", ")}]`);
  if (body.filter !== undefined) parts.push(body.filter?.trim() ? "a filter" : "no filter");
  if (body.description !== undefined) parts.push("description");
  return parts.join(", ");
}

function refusedUrl(message: string): ApiError {
  return new ApiError(400, ErrorCode.webhookUrlRefused, message);
}

export function addWebhookRoutes(router: Router, deps: AdminRouteDeps): void {
  const base = "/accounts/:account/projects/:project/webhooks";
  /** The project's compiled model and the webhook store (400 when this deployment has no change feed). */
  const scope = async (ctx: Context): Promise<{ model: ProjectModel } & WebhookAdminDeps> => {
    const account = nameParam(ctx, "account");
    const name = nameParam(ctx, "project");
    await requireProject(deps, account, name, ctx);
    const model = await deps.projects.get(account, name);
    if (!model) throw errors.notFound(`No project '${name}' in account '${account}'`);
    if (!deps.webhooks)
      throw errors.malformed(
        "Webhooks need the change feed, which this deployment has switched off (FEED_ENABLED)",
      );
    return { model, ...deps.webhooks };
  };
  const subscription = async (ctx: Context) => {
    const { model, store, allowLoopback, secrets } = await scope(ctx);
    const id = ctx.params.id ?? "";
    const found = SUBSCRIPTION_ID.test(id) ? await store.get(model.storage, id) : null;
    if (!found) throw errors.notFound(`No webhook subscription '${id.slice(0, 40)}'`);
    return { model, store, found, allowLoopback, secrets };
  };

  router.get(base, async (ctx) => {
    const { model, store } = await scope(ctx);
    const [subscriptions, circuits] = await Promise.all([
      store.list(model.storage),
      store.circuits(model.storage),
    ]);
    ctx.body = subscriptions.map(
      (s): WebhookListedView => ({
        ...subscriptionView(s),
        problem: subscriptionProblem(model, s),
        circuit: circuitView(parseCircuit(circuits.get(s.id) ?? "")),
      }),
    );
  });

  /**
   * What a subscription will deliver, checked: a URL the egress policy allows (`checkUrl`: it is new
   * or changed), tables of the project, a filter valid on each. Verbs in their canonical order,
   * tables once each, a blank filter none.
   */
  const checkedSpec = async (
    model: ProjectModel,
    allowLoopback: boolean,
    body: {
      url: string;
      tables: string[];
      verbs?: FeedVerb[] | undefined;
      filter?: string | null | undefined;
    },
    checkUrl: boolean,
  ) => {
    if (checkUrl) {
      const urlProblem = webhookUrlProblem(body.url);
      if (urlProblem) throw refusedUrl(`The webhook URL ${urlProblem}`);
    }
    const asked = body.verbs ?? FEED_VERBS;
    const verbs = FEED_VERBS.filter((v) => asked.includes(v));
    const tables = [...new Set(body.tables)];
    const filter = body.filter?.trim() ? body.filter : null;
    compileEventTest(model, { tables, verbs, filter });
    if (checkUrl) {
      const egress = await egressProblem(body.url, allowLoopback);
      if (egress) throw refusedUrl(`The webhook URL is refused by the egress policy: ${egress}`);
    }
    return { url: body.url, tables, verbs, filter };
  };

  /**
   * Applies `change` to the subscription as it is now; read again and applied again when another
   * request changed it in between. 404 when it is gone.
   */
  const updated = async (
    { model, store, found }: { model: ProjectModel; store: WebhookStore; found: WebhookSubscription },
    change: (now: WebhookSubscription) => Promise<WebhookSubscription>,
  ): Promise<WebhookSubscription> => {
    let before = found;
    for (let attempt = 0; attempt < 10; attempt++) {
      const after = await change(before);
      const outcome = await store.update(model.storage, before, after);
      if (outcome === "updated") return after;
      const again = outcome === "gone" ? null : await store.get(model.storage, before.id);
      if (!again) throw errors.notFound(`No webhook subscription '${before.id}'`);
      before = again;
    }
    throw errors.conflict(`The webhook subscription '${before.id}' kept changing; try again`);
  };

  router.post(base, async (ctx) => {
    const body: WebhookBody = parseBody(subscriptionBody, await readJsonBody(ctx, deps.maxBodyBytes));
    const { model, store, allowLoopback, secrets, maxPerProject } = await scope(ctx);
    noteAudit(ctx, { summary: `webhook to ${body.url.slice(0, 200)} refused` });
    const { url, tables, verbs, filter } = await checkedSpec(model, allowLoopback, body, true);
    const secret = newWebhookSecret();
    const created: WebhookSubscription = {
      id: `wh_${randomBytes(12).toString("hex")}`,
      account: model.account,
      project: model.name,
      projectUid: model.uid,
      url,
      tables,
      verbs,
      filter,
      description: body.description ?? "",
      secret: secrets.seal(secret),
      created: new Date().toISOString(),
    };
    const { account, name, uid, storage } = model;
    // The smaller of the plan's limit and the deployment's applies, counted in the step that stores.
    const { plan, limits } = (await deps.quotas?.limitsOf(account)) ?? { plan: "", limits: undefined };
    const planMost = limits?.webhooksPerProject ?? null;
    const byPlan = planMost !== null && planMost < maxPerProject;
    if (
      !(await store.create(
        { account, project: name, uid, storage },
        created,
        byPlan ? planMost : maxPerProject,
      ))
    ) {
      if (byPlan) {
        deps.quotas?.refused("webhooksPerProject");
        throw countRefusal("webhooksPerProject", planMost, (await store.list(storage)).length, plan);
      }
      throw errors.limitReached(
        `The project '${name}' has as many webhook subscriptions as it may have`,
        maxPerProject,
        "WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT",
      );
    }
    noteAudit(ctx, {
      summary: `webhook ${created.id} created: ${body.url.slice(0, 200)}, tables [${tables.join(", ")}], verbs [${verbs.join(", ")}]${filter ? ", with a filter" : ""}`,
    });
    ctx.status = 201;
    ctx.body = { ...subscriptionView(created), secret } satisfies WebhookWithSecretView;
  });

  router.get(`${base}/:id`, async (ctx) => {
    const { model, store, found } = await subscription(ctx);
    const [retrying, dead, circuit] = await Promise.all([
      store.retrying(model.storage, found.id),
      store.deadLetters(model.storage, found.id),
      store.circuit(model.storage, found.id),
    ]);
    ctx.body = {
      ...subscriptionView(found),
      problem: subscriptionProblem(model, found),
      circuit: circuitView(parseCircuit(circuit)),
      retrying,
      deadLetters: dead.length,
    } satisfies WebhookDetailView;
  });

  router.patch(`${base}/:id`, async (ctx) => {
    const body: WebhookChanges = parseBody(subscriptionChanges, await readJsonBody(ctx, deps.maxBodyBytes));
    const id = (ctx.params.id ?? "").slice(0, 40);
    noteAudit(ctx, { summary: `webhook ${id}: change refused` });
    const found = await subscription(ctx);
    const { model, allowLoopback } = found;
    const after = await updated(found, async (now) => {
      const merged = {
        url: body.url ?? now.url,
        tables: body.tables ?? now.tables,
        verbs: body.verbs ?? now.verbs,
        filter: body.filter === undefined ? now.filter : body.filter,
      };
      const spec = await checkedSpec(model, allowLoopback, merged, merged.url !== now.url);
      return { ...now, ...spec, description: body.description ?? now.description };
    });
    noteAudit(ctx, { summary: `webhook ${after.id} changed: ${changeSummary(body)}` });
    ctx.body = subscriptionView(after);
  });

  router.post(`${base}/:id/secret`, async (ctx) => {
    const body = parseBody(secretRotationBody, await readOptionalJsonBody(ctx, deps.maxBodyBytes));
    const keepSeconds = body.previousSecretSeconds ?? PREVIOUS_SECRET_SECONDS;
    const found = await subscription(ctx);
    const secret = newWebhookSecret();
    const after = await updated(found, async (now) => {
      const { previousSecret: _replaced, ...rest } = now;
      const until = Date.now() + keepSeconds * 1000;
      return {
        ...rest,
        secret: found.secrets.seal(secret),
        ...(keepSeconds > 0 ? { previousSecret: { secret: now.secret, until } } : {}),
      };
    });
    noteAudit(ctx, {
      summary: `webhook ${after.id}: secret rotated, the previous one signs for ${keepSeconds} s more`,
    });
    ctx.body = { ...subscriptionView(after), secret } satisfies WebhookWithSecretView;
  });

  router.delete(`${base}/:id`, async (ctx) => {
    const id = (ctx.params.id ?? "").slice(0, 40);
    noteAudit(ctx, { summary: `webhook ${id} deleted` });
    const { model, store, found } = await subscription(ctx);
    if (!(await store.delete(model.storage, found.id)))
      throw errors.notFound(`No webhook subscription '${id}'`);
    ctx.body = { id: found.id, deleted: true } satisfies WebhookDeletedView;
  });

  router.get(`${base}/:id/deliveries`, async (ctx) => {
    const params = parseQueryString(ctx.querystring);
    const count = intParam(params, "pagesize", LOG_PAGE_DEFAULT, 1, 1000);
    const { model, store, found } = await subscription(ctx);
    ctx.body = (await store.deliveryLog(model.storage, found.id, count)).map(logView);
  });

  router.get(`${base}/:id/deadletters`, async (ctx) => {
    const { model, store, found } = await subscription(ctx);
    ctx.body = (await store.deadLetters(model.storage, found.id)).map(deadView);
  });

  router.post(`${base}/:id/deadletters/replay`, async (ctx) => {
    const { model, store, found } = await subscription(ctx);
    const replayed = await store.replay(model.storage, found.id, null);
    noteAudit(ctx, { summary: `webhook ${found.id}: ${replayed} dead letter(s) replayed` });
    ctx.body = { id: found.id, replayed } satisfies ReplayView;
  });

  const deadLetterId = (ctx: Context) => {
    const webhookId = ctx.params.webhookId ?? "";
    if (!WEBHOOK_ID.test(webhookId)) throw errors.notFound(`No dead letter '${webhookId.slice(0, 80)}'`);
    return webhookId;
  };

  router.post(`${base}/:id/deadletters/:webhookId/replay`, async (ctx) => {
    const { model, store, found } = await subscription(ctx);
    const webhookId = deadLetterId(ctx);
    if ((await store.replay(model.storage, found.id, webhookId)) === 0)
      throw errors.notFound(`No dead letter '${webhookId}'`);
    noteAudit(ctx, { summary: `webhook ${found.id}: dead letter ${webhookId} replayed` });
    ctx.body = { id: found.id, replayed: 1 } satisfies ReplayView;
  });

  router.delete(`${base}/:id/deadletters/:webhookId`, async (ctx) => {
    const { model, store, found } = await subscription(ctx);
    const webhookId = deadLetterId(ctx);
    if (!(await store.discard(model.storage, found.id, webhookId)))
      throw errors.notFound(`No dead letter '${webhookId}'`);
    noteAudit(ctx, { summary: `webhook ${found.id}: dead letter ${webhookId} discarded` });
    ctx.body = { webhookId, deleted: true };
  });
}
