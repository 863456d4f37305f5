/**
 * A project's definition history, newest first (or oldest first), filtered by who stored
 * each revision: view any revision, roll back to one (as a new revision).
 */
import { useState } from "preact/hooks";
import {
  type LoadedProject,
  listingQuery,
  type RevisionView,
  type RevisionWithDefinitionView,
} from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { ApiFailure } from "../api.ts";
import { Confirm, Dialog } from "../components/Dialog.tsx";
import { Done, ErrorNotice } from "../components/ErrorNotice.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { Pager } from "../components/Pager.tsx";
import { ScrollArea } from "../components/ScrollArea.tsx";
import { ORDER_OPTIONS, SelectField, whoOptions } from "../components/SelectField.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { useLoad } from "../components/useLoad.ts";
import { usePaged } from "../components/usePaged.ts";
import { valueText } from "../components/Value.tsx";

const byText = (by: RevisionView["by"]) =>
  !by ? "unknown" : by.kind === "operator" ? "the operator" : `${by.login ?? "?"} (${by.role ?? by.kind})`;

export function Revisions(props: {
  context: AdminContext;
  project: LoadedProject;
  onRolledBack: () => void;
}) {
  const { context, project } = props;
  const { api } = context;
  const admins = useLoad(api.admins.list, [api]);
  const [order, setOrder] = useState("newest");
  const [by, setBy] = useState("");
  const revisions = usePaged<RevisionView>(
    context.client,
    api.revisions.path(project.name, listingQuery({ order, by, pagesize: "20" })),
  );
  const [viewing, setViewing] = useState<RevisionWithDefinitionView>();
  const [rollingBack, setRollingBack] = useState<number>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();

  async function view(n: number) {
    setError(undefined);
    try {
      setViewing(await api.revisions.get(project.name, n));
    } catch (err) {
      setError(err);
    }
  }

  async function rollBack(n: number) {
    setRollingBack(undefined);
    setError(undefined);
    setDone(undefined);
    try {
      const r = await api.revisions.rollBack(project.name, n, project.etag);
      setDone(`Rolled back: stored revision ${r.revision} (${r.summary})`);
      props.onRolledBack();
      revisions.reload();
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 412) {
        setError(
          new Error(
            `Someone else changed the project since you loaded revision ${project.revision}: nothing was rolled back. Reload the project and try again.`,
          ),
        );
        props.onRolledBack();
        revisions.reload();
      } else setError(err);
    }
  }

  return (
    <div aria-busy={revisions.loading}>
      <form class="toolbar" aria-label="Which revisions" onSubmit={(e) => e.preventDefault()}>
        <SelectField label="Order" value={order} options={ORDER_OPTIONS} onChange={setOrder} />
        <SelectField
          label="Stored by"
          value={by}
          options={whoOptions((admins.value ?? []).map((a) => a.login))}
          onChange={setBy}
        />
      </form>
      <ErrorNotice error={error} />
      <LoadStatus what="revisions" load={revisions} />
      <Done message={done} />
      <Table
        label="Revisions"
        rows={revisions.items ?? []}
        rowKey={(r) => r.revision}
        rowClass={(r) => (r.revision === project.revision ? "current" : undefined)}
        columns={[
          {
            title: "Revision",
            cell: (r) => (
              <>
                {r.revision}
                {r.revision === project.revision && <span class="badge">current</span>}
              </>
            ),
          },
          { title: "When", cell: (r) => <Time iso={r.at} /> },
          { title: "By", cell: (r) => byText(r.by) },
          { title: "Summary", cell: (r) => <bdi>{r.summary}</bdi> },
        ]}
        actions={(r) => (
          <>
            <button type="button" onClick={() => view(r.revision)}>
              View
            </button>
            {!context.readOnly && r.revision !== project.revision && (
              <button type="button" onClick={() => setRollingBack(r.revision)}>
                Roll back to {r.revision}
              </button>
            )}
          </>
        )}
      />
      <Pager label="Revision pages" paged={revisions} />
      {viewing && (
        <Dialog title={`Revision ${viewing.revision}`} onClose={() => setViewing(undefined)}>
          <p>
            <Time iso={viewing.at} /> by <bdi>{byText(viewing.by)}</bdi>: <bdi>{viewing.summary}</bdi>
          </p>
          <ScrollArea label={`Revision ${viewing.revision}'s definition`} class="tall">
            <pre class="code">{valueText(JSON.stringify(viewing.definition, null, 2))}</pre>
          </ScrollArea>
          <div class="actions">
            <button type="button" onClick={() => setViewing(undefined)} autofocus>
              Close
            </button>
          </div>
        </Dialog>
      )}
      {rollingBack !== undefined && (
        <Confirm
          title={`Roll back to revision ${rollingBack}?`}
          question={`Revision ${rollingBack}'s definition becomes a new revision (after ${project.revision}); the history stays as it is.`}
          confirmLabel="Roll back"
          onConfirm={() => rollBack(rollingBack)}
          onCancel={() => setRollingBack(undefined)}
        />
      )}
    </div>
  );
}
