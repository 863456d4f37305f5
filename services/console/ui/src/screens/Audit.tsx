/** The account's audit trail, oldest first, paged by `next_batch`; a start time jumps ahead. */
import { useState } from "preact/hooks";
import type { AdminContext } from "../admin-context.ts";
import { Field } from "../components/Field.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { Pager } from "../components/Pager.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { Table } from "../components/Table.tsx";
import { fromUtcInput, Time } from "../components/Time.tsx";
import { usePaged } from "../components/usePaged.ts";

interface Entry {
  id: string;
  at: string;
  actor: { kind: string; login?: string; role?: string };
  method: string;
  path: string;
  summary: string;
  status: number;
  errorCode?: number;
  requestId?: string;
}

const PAGE_SIZES = ["10", "20", "50", "100"];

export function Audit({ context }: { context: AdminContext }) {
  const [since, setSince] = useState("");
  const [pagesize, setPagesize] = useState("20");
  const [query, setQuery] = useState("pagesize=20");
  const audit = usePaged<Entry>(context.client, `${context.accountPath}/audit?${query}`);

  const apply = (e: Event) => {
    e.preventDefault();
    const params = new URLSearchParams({ pagesize });
    if (since) params.set("since", fromUtcInput(since));
    setQuery(params.toString());
  };

  return (
    <section aria-labelledby="audit-title" aria-busy={audit.loading}>
      <ScreenHeading id="audit-title" title="Audit trail" />
      <form class="toolbar" onSubmit={apply}>
        <Field label="From (UTC)" name="since" type="datetime-local" value={since} onInput={setSince} />
        <div class="field">
          <label for="audit-pagesize">Entries per page</label>
          <select
            id="audit-pagesize"
            value={pagesize}
            onChange={(e) => setPagesize((e.target as HTMLSelectElement).value)}
          >
            {PAGE_SIZES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </div>
        <button type="submit">Show</button>
      </form>
      <LoadStatus what="the audit trail" load={audit} />
      {audit.items?.length === 0 && <p class="empty">No entries.</p>}
      {audit.items && audit.items.length > 0 && (
        <Table
          label="Audit entries"
          class="audit"
          rows={audit.items}
          rowKey={(e) => e.id}
          rowClass={(e) => (e.status >= 400 ? "refused" : undefined)}
          columns={[
            { title: "When", cell: (e) => <Time iso={e.at} /> },
            {
              title: "Who",
              class: "nowrap",
              cell: (e) =>
                e.actor.kind === "operator" ? (
                  "operator"
                ) : (
                  <>
                    <bdi>{e.actor.login}</bdi> ({e.actor.role})
                  </>
                ),
            },
            {
              title: "Change",
              cell: (e) => (
                <code>
                  {e.method} {e.path}
                </code>
              ),
            },
            { title: "Summary", cell: (e) => <bdi>{e.summary}</bdi> },
            { title: "Status", cell: (e) => `${e.status}${e.errorCode ? ` / ${e.errorCode}` : ""}` },
          ]}
        />
      )}
      <Pager label="Audit pages" paged={audit} />
    </section>
  );
}
