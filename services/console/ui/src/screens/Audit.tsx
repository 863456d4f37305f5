/**
 * The account's audit trail, newest first (or oldest first), paged by `next_batch`;
 * filtered by who, what kind of change and whether it was refused; a start time.
 */
import { useState } from "preact/hooks";
import { AUDIT_KINDS, type AuditEntryView, type AuditKind, listingQuery } from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { Field } from "../components/Field.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { Pager } from "../components/Pager.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { ORDER_OPTIONS, SelectField, whoOptions } from "../components/SelectField.tsx";
import { Table } from "../components/Table.tsx";
import { fromUtcInput, Time } from "../components/Time.tsx";
import { useLoad } from "../components/useLoad.ts";
import { usePaged } from "../components/usePaged.ts";

const PAGE_SIZES = ["10", "20", "50", "100"].map((s) => ({ value: s, label: s }));

const KIND_LABELS: Record<AuditKind, string> = {
  account: "The account",
  admin: "Administrators",
  project: "Project definitions",
  user: "Users",
  apikey: "API keys",
};

/** The server's kinds of change (a new one fails to compile until it has a label). */
const KINDS = [
  { value: "", label: "Any change" },
  ...AUDIT_KINDS.map((kind) => ({ value: kind, label: KIND_LABELS[kind] })),
];

const OUTCOMES = [
  { value: "", label: "Made or refused" },
  { value: "true", label: "Refused only" },
  { value: "false", label: "Made only" },
];

export function Audit({ context }: { context: AdminContext }) {
  const { api } = context;
  const admins = useLoad(api.admins.list, [api]);
  const [filters, setFilters] = useState({
    order: "newest",
    by: "",
    kind: "",
    refused: "",
    since: "",
    pagesize: "20",
  });
  const set = (name: keyof typeof filters) => (value: string) => setFilters((f) => ({ ...f, [name]: value }));
  const [query, setQuery] = useState(listingQuery({ order: "newest", pagesize: "20" }));
  const audit = usePaged<AuditEntryView>(context.client, api.auditPath(query));

  const apply = (e: Event) => {
    e.preventDefault();
    setQuery(listingQuery({ ...filters, since: filters.since ? fromUtcInput(filters.since) : undefined }));
  };

  return (
    <section aria-labelledby="audit-title" aria-busy={audit.loading}>
      <ScreenHeading id="audit-title" title="Audit trail" />
      <form class="toolbar" onSubmit={apply} aria-label="Which entries">
        <SelectField label="Order" value={filters.order} options={ORDER_OPTIONS} onChange={set("order")} />
        <SelectField
          label="Who"
          value={filters.by}
          options={whoOptions((admins.value ?? []).map((a) => a.login))}
          onChange={set("by")}
        />
        <SelectField label="Kind of change" value={filters.kind} options={KINDS} onChange={set("kind")} />
        <SelectField label="Outcome" value={filters.refused} options={OUTCOMES} onChange={set("refused")} />
        <Field
          label="From (UTC)"
          name="since"
          type="datetime-local"
          value={filters.since}
          onInput={set("since")}
        />
        <SelectField
          id="audit-pagesize"
          label="Entries per page"
          value={filters.pagesize}
          options={PAGE_SIZES}
          onChange={set("pagesize")}
        />
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
            {
              title: "Status",
              cell: (e) => (
                <>
                  {e.status}
                  {e.errorCode ? ` / ${e.errorCode}` : ""}
                  {e.status >= 400 && <span class="badge status-refused">refused</span>}
                </>
              ),
            },
          ]}
        />
      )}
      <Pager label="Audit pages" paged={audit} />
    </section>
  );
}
