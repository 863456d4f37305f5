/**
 * A project's webhook subscriptions (docs/webhooks.md): list (with a
 * subscription's circuit when its receiver's time-outs backed it off), create
 * (the signing secret shown once), change, rotate the secret (the new one shown
 * once), delete; per subscription its delivery log and its dead letters, which
 * an admin replays (one or all) or discards.
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import {
  WEBHOOK_VERBS,
  type WebhookCircuitView,
  type WebhookListedView,
  type WebhookVerb,
  type WebhookView,
  type WebhookWithSecretView,
} from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { Confirm, Dialog } from "../components/Dialog.tsx";
import { Outcome } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { FormCard } from "../components/FormCard.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { Checkboxes } from "../components/RolePicker.tsx";
import { RowAction, Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { useAction } from "../components/useAction.ts";
import { useCollection } from "../components/useCollection.ts";
import { useLoad } from "../components/useLoad.ts";
import { Names } from "../components/Value.tsx";

/** How many of a subscription's latest delivery attempts its log shows. */
const LOG_LENGTH = 50;

/** What a circuit that is not closed means for the subscription's deliveries. */
function CircuitNotice({ circuit }: { circuit: WebhookCircuitView }) {
  if (circuit.state === "closed") return null;
  return (
    <p class="notice warning">
      Backed off after {circuit.timeoutsInARow} attempt{circuit.timeoutsInARow === 1 ? "" : "s"} in a row
      without an answer in time: nothing is sent
      {circuit.state === "open" && circuit.nextProbe ? (
        <>
          {" "}
          until one probe at <Time iso={circuit.nextProbe} />
        </>
      ) : (
        " but one probe, under way now"
      )}
      ; its events wait.
    </p>
  );
}

export function Webhooks(props: { context: AdminContext; project: string; tables: string[] }) {
  const { context } = props;
  const { api } = context;
  const [url, setUrl] = useState("");
  const [tables, setTables] = useState<string[]>([]);
  const [verbs, setVerbs] = useState<WebhookVerb[]>([...WEBHOOK_VERBS]);
  const [filter, setFilter] = useState("");
  const [description, setDescription] = useState("");
  const [editing, setEditing] = useState<WebhookView>();
  const [secret, setSecret] = useState<{ hook: WebhookWithSecretView; rotated: boolean }>();
  const [rotating, setRotating] = useState<WebhookView>();
  const [open, setOpen] = useState<WebhookView>();
  const form = useRef<HTMLDivElement>(null);

  const fill = (hook: WebhookView | undefined) => {
    setEditing(hook);
    setUrl(hook?.url ?? "");
    setTables(hook?.tables ?? []);
    setVerbs(hook?.verbs ?? [...WEBHOOK_VERBS]);
    setFilter(hook?.filter ?? "");
    setDescription(hook?.description ?? "");
  };

  const hooks = useCollection<WebhookListedView>(
    (signal) => api.webhooks.list(props.project, signal),
    async (hook) => {
      await api.webhooks.remove(props.project, hook.id);
      if (open?.id === hook.id) setOpen(undefined);
      if (editing?.id === hook.id) fill(undefined);
      return `Webhook to ${hook.url} deleted.`;
    },
    [api, props.project],
  );

  // "Change" fills the form: the focus goes to its first input.
  useLayoutEffect(() => {
    if (editing) form.current?.querySelector("input")?.focus();
  }, [editing]);

  const save = () => {
    void hooks.change(async () => {
      if (editing) {
        const body = { url, tables, verbs, filter: filter.trim() ? filter : null, description };
        const changed = await api.webhooks.change(props.project, editing.id, body);
        fill(undefined);
        if (open?.id === changed.id) setOpen(changed);
        return `Webhook to ${changed.url} changed.`;
      }
      const created = await api.webhooks.create(props.project, {
        url,
        tables,
        verbs,
        ...(filter.trim() ? { filter } : {}),
        ...(description ? { description } : {}),
      });
      setSecret({ hook: created, rotated: false });
      fill(undefined);
      return undefined;
    });
  };
  const rotate = (hook: WebhookView, previousSecretSeconds?: number) => {
    setRotating(undefined);
    void hooks.change(async () => {
      const body = previousSecretSeconds === undefined ? {} : { previousSecretSeconds };
      setSecret({ hook: await api.webhooks.rotate(props.project, hook.id, body), rotated: true });
      return undefined;
    });
  };

  return (
    <div class="split" aria-busy={hooks.loading}>
      <div>
        <h2>Webhooks</h2>
        <LoadStatus what="webhooks" load={hooks} />
        {hooks.value?.length === 0 && <p class="empty">No webhooks.</p>}
        {hooks.value && hooks.value.length > 0 && (
          <Table
            label="Webhooks"
            class="stacked-actions"
            rows={hooks.value}
            rowKey={(h) => h.id}
            columns={[
              {
                title: "URL",
                cell: (h) => (
                  <>
                    <bdi class="code">{h.url}</bdi>
                    {h.description && <div class="muted">{h.description}</div>}
                    {h.problem && <p class="notice warning">{h.problem}</p>}
                    <CircuitNotice circuit={h.circuit} />
                    {h.previousSecretExpires && (
                      <div class="muted">
                        The previous secret signs too, until <Time iso={h.previousSecretExpires} />
                      </div>
                    )}
                  </>
                ),
              },
              { title: "Tables", cell: (h) => <Names names={h.tables} /> },
              { title: "Verbs", cell: (h) => h.verbs.join(", ") },
              { title: "Filter", cell: (h) => (h.filter ? <code>{h.filter}</code> : "—") },
              {
                title: "Deliveries",
                cell: (h) => (
                  <button type="button" onClick={() => setOpen(h)}>
                    Log and dead letters<span class="sr-only"> of {h.url}</span>
                  </button>
                ),
              },
            ]}
            actions={
              context.readOnly
                ? undefined
                : (h) => (
                    <>
                      <button type="button" onClick={() => fill(h)}>
                        Change<span class="sr-only"> {h.url}</span>
                      </button>
                      <button type="button" onClick={() => setRotating(h)}>
                        New secret<span class="sr-only"> for {h.url}</span>
                      </button>
                      <RowAction label="Delete" name={h.url} onClick={() => hooks.ask(h)} />
                    </>
                  )
            }
          />
        )}
        {open && <Deliveries context={context} project={props.project} hook={open} />}
      </div>
      {!context.readOnly && (
        <div ref={form}>
          <FormCard
            title={editing ? `Change the webhook to ${editing.url}` : "New webhook"}
            submitLabel={editing ? "Save changes" : "Create webhook"}
            busy={hooks.action.busy}
            onSubmit={save}
          >
            <Field
              label="URL"
              name="hook-url"
              value={url}
              onInput={setUrl}
              required
              hint="http or https; a public address."
            />
            <Checkboxes legend="Tables" names={props.tables} chosen={tables} onChange={setTables} />
            <Checkboxes legend="Verbs" names={WEBHOOK_VERBS} chosen={verbs} onChange={setVerbs} />
            <Field
              label="Filter"
              name="hook-filter"
              value={filter}
              onInput={setFilter}
              hint="Optional, in the filter language, on the tables' columns."
            />
            <Field label="Description" name="hook-description" value={description} onInput={setDescription} />
            {editing && (
              <p class="muted">
                Its queue stays: events waiting for a retry and dead letters go to the new URL.{" "}
                <button type="button" onClick={() => fill(undefined)}>
                  Cancel the change
                </button>
              </p>
            )}
          </FormCard>
        </div>
      )}
      <Outcome action={hooks.action} />
      {secret && (
        <NewSecret hook={secret.hook} rotated={secret.rotated} onClose={() => setSecret(undefined)} />
      )}
      {rotating && (
        <Dialog
          title={
            <>
              A new signing secret for the webhook to <bdi>{rotating.url}</bdi>
            </>
          }
          onClose={() => setRotating(undefined)}
        >
          <p>
            Deliveries are signed with the new secret from now on. Unless it leaked, the current secret signs
            them too for a day, so that receivers can switch over without refusing any.
          </p>
          <div class="actions">
            <button type="button" class="primary" onClick={() => rotate(rotating)}>
              New secret, keep the current one for a day
            </button>
            <button type="button" class="danger" onClick={() => rotate(rotating, 0)}>
              New secret, stop the current one now
            </button>
            <button type="button" onClick={() => setRotating(undefined)} autofocus>
              Cancel
            </button>
          </div>
        </Dialog>
      )}
      {hooks.removing && (
        <Confirm
          title={
            <>
              Delete the webhook to <bdi>{hooks.removing.url}</bdi>?
            </>
          }
          question="Its retries, dead letters and delivery log are deleted with it."
          confirmLabel="Delete"
          onConfirm={hooks.confirm}
          onCancel={hooks.cancel}
        />
      )}
    </div>
  );
}

/** One subscription's delivery log and dead letters, with replay. */
function Deliveries(props: { context: AdminContext; project: string; hook: WebhookView }) {
  const { context, project } = props;
  const { api } = context;
  const id = props.hook.id;
  const log = useLoad(
    (signal) => api.webhooks.deliveries(project, id, LOG_LENGTH, signal),
    [api, project, id],
  );
  const dead = useLoad((signal) => api.webhooks.deadLetters(project, id, signal), [api, project, id]);
  const action = useAction();
  const replay = (webhookId: string | null) => {
    void action.run(async () => {
      const { replayed } = await api.webhooks.replay(project, id, webhookId);
      await Promise.all([dead.reload(), log.reload()]);
      return `${replayed} dead letter(s) sent again.`;
    });
  };
  return (
    <section aria-labelledby="deliveries-title">
      <h3 id="deliveries-title">
        Deliveries to <bdi>{props.hook.url}</bdi>
      </h3>
      <button type="button" onClick={() => void Promise.all([dead.reload(), log.reload()])}>
        Refresh
      </button>
      <h4>Dead letters</h4>
      <LoadStatus what="dead letters" load={dead} />
      {dead.value?.length === 0 && <p class="empty">No dead letters.</p>}
      {dead.value && dead.value.length > 0 && (
        <>
          {!context.readOnly && (
            <button type="button" onClick={() => replay(null)} disabled={action.busy}>
              Replay all
            </button>
          )}
          <Table
            label="Dead letters"
            rows={dead.value}
            rowKey={(d) => d.webhookId}
            columns={[
              { title: "Event", cell: (d) => <code>{d.webhookId}</code>, class: "id" },
              { title: "Type", cell: (d) => d.type },
              { title: "Attempts", cell: (d) => d.attempts },
              { title: "Last answer", cell: (d) => d.lastStatus ?? d.lastError ?? "—" },
              { title: "Parked", cell: (d) => <Time iso={d.parked} /> },
            ]}
            actions={
              context.readOnly
                ? undefined
                : (d) => (
                    <button type="button" onClick={() => replay(d.webhookId)} disabled={action.busy}>
                      Replay<span class="sr-only"> {d.webhookId}</span>
                    </button>
                  )
            }
          />
        </>
      )}
      <Outcome action={action} />
      <h4>Delivery log</h4>
      <LoadStatus what="the delivery log" load={log} />
      {log.value?.length === 0 && <p class="empty">No attempts yet.</p>}
      {log.value && log.value.length > 0 && (
        <Table
          label="Delivery log"
          rows={log.value}
          rowKey={(a, i) => `${a.at}-${i}`}
          columns={[
            { title: "When", cell: (a) => <Time iso={a.at} /> },
            { title: "Outcome", cell: (a) => <span class={`badge status-${a.outcome}`}>{a.outcome}</span> },
            { title: "Attempt", cell: (a) => a.attempt },
            { title: "Status", cell: (a) => a.status ?? "—" },
            { title: "Latency", cell: (a) => (a.latencyMs === null ? "—" : `${a.latencyMs} ms`) },
            { title: "Event / error", cell: (a) => a.error ?? <code>{a.webhookId}</code>, class: "id" },
          ]}
        />
      )}
    </section>
  );
}

/** The one time a subscription's secret is shown: copy it now. */
function NewSecret(props: { hook: WebhookWithSecretView; rotated: boolean; onClose: () => void }) {
  return (
    <Dialog title={props.rotated ? "Secret rotated" : "Webhook created"} onClose={props.onClose}>
      <p class="notice warning">
        This is the only time the signing secret is shown. Copy it now: receivers check each delivery's
        signature with it.
      </p>
      <div class="field">
        <label for="new-hook-secret">Signing secret</label>
        <input
          id="new-hook-secret"
          class="code"
          readOnly
          value={props.hook.secret}
          onFocus={(e) => (e.target as HTMLInputElement).select()}
        />
      </div>
      <div class="actions">
        <button type="button" onClick={props.onClose} autofocus>
          Done
        </button>
      </div>
    </Dialog>
  );
}
