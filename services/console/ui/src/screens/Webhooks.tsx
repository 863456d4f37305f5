/**
 * A project's webhook subscriptions (docs/webhooks.md): list (with a
 * subscription's circuit when its receiver's time-outs backed it off), create
 * (the signing secret shown once), change, rotate the secret (the new one shown
 * once), delete; per subscription its delivery log and its dead letters, which
 * an admin replays (one or all) or discards.
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import type { AdminContext } from "../admin-context.ts";
import { seg } from "../api.ts";
import { Confirm, Dialog } from "../components/Dialog.tsx";
import { Outcome } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { FormCard } from "../components/FormCard.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { Checkboxes } from "../components/RolePicker.tsx";
import { RowAction, Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { useAction } from "../components/useAction.ts";
import { useLoad } from "../components/useLoad.ts";
import { Names } from "../components/Value.tsx";

interface Subscription {
  id: string;
  url: string;
  tables: string[];
  verbs: string[];
  filter: string | null;
  description: string;
  created: string;
  /** While a rotated secret's predecessor still signs: until when. */
  previousSecretExpires: string | null;
  /** What the project's current definition keeps it from doing (as listed), if anything. */
  problem?: string | null;
  /** Its circuit (docs/webhooks.md#isolation-and-the-circuit), as listed. */
  circuit?: Circuit;
  secret?: string;
}

interface Circuit {
  state: "closed" | "open" | "half-open";
  timeoutsInARow: number;
  opened: string | null;
  nextProbe: string | null;
}

/** What a circuit that is not closed means for the subscription's deliveries. */
function CircuitNotice({ circuit }: { circuit: Circuit | undefined }) {
  if (!circuit || circuit.state === "closed") return null;
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

interface Attempt {
  at: string;
  outcome: string;
  webhookId: string | null;
  attempt: number;
  status: number | null;
  latencyMs: number | null;
  error?: string;
}

interface DeadLetter {
  webhookId: string;
  type: string;
  attempts: number;
  parked: string;
  lastStatus: number | null;
  lastError: string | null;
}

const VERBS = ["INSERT", "UPDATE", "DELETE"];

export function Webhooks(props: { context: AdminContext; project: string; tables: string[] }) {
  const { context } = props;
  const hooksPath = `${context.accountPath}/projects/${seg(props.project)}/webhooks`;
  const hooks = useLoad(
    async () => (await context.client.call<Subscription[]>("GET", hooksPath)).body,
    [hooksPath],
  );
  const [url, setUrl] = useState("");
  const [tables, setTables] = useState<string[]>([]);
  const [verbs, setVerbs] = useState<string[]>(VERBS);
  const [filter, setFilter] = useState("");
  const [description, setDescription] = useState("");
  const [editing, setEditing] = useState<Subscription>();
  const [secret, setSecret] = useState<{ hook: Subscription; rotated: boolean }>();
  const [rotating, setRotating] = useState<Subscription>();
  const [deleting, setDeleting] = useState<Subscription>();
  const [open, setOpen] = useState<Subscription>();
  const action = useAction();
  const form = useRef<HTMLDivElement>(null);

  // "Change" fills the form: the focus goes to its first input.
  useLayoutEffect(() => {
    if (editing) form.current?.querySelector("input")?.focus();
  }, [editing]);

  const fill = (hook: Subscription | undefined) => {
    setEditing(hook);
    setUrl(hook?.url ?? "");
    setTables(hook?.tables ?? []);
    setVerbs(hook?.verbs ?? VERBS);
    setFilter(hook?.filter ?? "");
    setDescription(hook?.description ?? "");
  };

  const save = () => {
    void action.run(async () => {
      if (editing) {
        const body = { url, tables, verbs, filter: filter.trim() ? filter : null, description };
        const path = `${hooksPath}/${seg(editing.id)}`;
        const r = await context.client.call<Subscription>("PATCH", path, { body });
        fill(undefined);
        if (open?.id === r.body.id) setOpen(r.body);
        await hooks.reload();
        return `Webhook to ${r.body.url} changed.`;
      }
      const body: Record<string, unknown> = { url, tables, verbs };
      if (filter.trim()) body.filter = filter;
      if (description) body.description = description;
      const r = await context.client.call<Subscription>("POST", hooksPath, { body });
      setSecret({ hook: r.body, rotated: false });
      fill(undefined);
      await hooks.reload();
      return undefined;
    });
  };
  const rotate = (hook: Subscription, previousSecretSeconds?: number) => {
    setRotating(undefined);
    void action.run(async () => {
      const body = previousSecretSeconds === undefined ? {} : { previousSecretSeconds };
      const path = `${hooksPath}/${seg(hook.id)}/secret`;
      const r = await context.client.call<Subscription>("POST", path, { body });
      setSecret({ hook: r.body, rotated: true });
      await hooks.reload();
      return undefined;
    });
  };
  const remove = (hook: Subscription) => {
    setDeleting(undefined);
    void action.run(async () => {
      await context.client.call("DELETE", `${hooksPath}/${seg(hook.id)}`);
      if (open?.id === hook.id) setOpen(undefined);
      if (editing?.id === hook.id) fill(undefined);
      await hooks.reload();
      return `Webhook to ${hook.url} deleted.`;
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
                      <RowAction label="Delete" name={h.url} onClick={() => setDeleting(h)} />
                    </>
                  )
            }
          />
        )}
        {open && <Deliveries context={context} path={`${hooksPath}/${seg(open.id)}`} hook={open} />}
      </div>
      {!context.readOnly && (
        <div ref={form}>
          <FormCard
            title={editing ? `Change the webhook to ${editing.url}` : "New webhook"}
            submitLabel={editing ? "Save changes" : "Create webhook"}
            busy={action.busy}
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
            <Checkboxes legend="Verbs" names={VERBS} chosen={verbs} onChange={setVerbs} />
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
      <Outcome action={action} />
      {secret?.hook.secret && (
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
      {deleting && (
        <Confirm
          title={
            <>
              Delete the webhook to <bdi>{deleting.url}</bdi>?
            </>
          }
          question="Its retries, dead letters and delivery log are deleted with it."
          confirmLabel="Delete"
          onConfirm={() => remove(deleting)}
          onCancel={() => setDeleting(undefined)}
        />
      )}
    </div>
  );
}

/** One subscription's delivery log and dead letters, with replay. */
function Deliveries(props: { context: AdminContext; path: string; hook: Subscription }) {
  const { context, path } = props;
  const log = useLoad(
    async () => (await context.client.call<Attempt[]>("GET", `${path}/deliveries?pagesize=50`)).body,
    [path],
  );
  const dead = useLoad(
    async () => (await context.client.call<DeadLetter[]>("GET", `${path}/deadletters`)).body,
    [path],
  );
  const action = useAction();
  const replay = (webhookId: string | null) => {
    void action.run(async () => {
      const target =
        webhookId === null ? `${path}/deadletters/replay` : `${path}/deadletters/${seg(webhookId)}/replay`;
      const r = await context.client.call<{ replayed: number }>("POST", target);
      await Promise.all([dead.reload(), log.reload()]);
      return `${r.body.replayed} dead letter(s) sent again.`;
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
              { title: "Event", cell: (d) => <code>{d.webhookId}</code> },
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
            { title: "Event / error", cell: (a) => a.error ?? <code>{a.webhookId}</code> },
          ]}
        />
      )}
    </section>
  );
}

/** The one time a subscription's secret is shown: copy it now. */
function NewSecret(props: { hook: Subscription; rotated: boolean; onClose: () => void }) {
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
