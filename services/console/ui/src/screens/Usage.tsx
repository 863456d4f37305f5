/**
 * The account's usage: its plan and limits with what is in use now, warnings
 * from 80 % of a limit on, and charts of requests, storage, sandbox CPU,
 * webhook deliveries and live-stream time over a chosen range, with the
 * range's totals as a table (what the charts show, as text).
 */
import { useMemo, useState } from "preact/hooks";
import { present } from "../../../../../shared/present.ts";
import type { UsagePointView, UsageView, UsageWarningView } from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { SelectField } from "../components/SelectField.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { type ChartSeries, UsageChart } from "../components/UsageChart.tsx";
import { useLoad } from "../components/useLoad.ts";

const DAY = { value: "day", label: "Last 24 hours", days: 1, step: "1h" };
const RANGES = [
  DAY,
  { value: "week", label: "Last 7 days", days: 7, step: "6h" },
  { value: "month", label: "Last 30 days", days: 30, step: "1d" },
];

/** Colours with at least 4.5:1 contrast on the card's white. */
const COLOURS = ["#1f5fbf", "#b3261e", "#2e7d32", "#6a1b9a"];

const LIMIT_LABELS: Record<string, string> = {
  storedBytes: "Stored data",
  rowsPerTable: "Rows in a table",
  projects: "Projects",
  tablesPerProject: "Tables in a project",
  usersPerProject: "Users in a project",
  apiKeysPerProject: "API keys in a project",
  webhooksPerProject: "Webhook subscriptions in a project",
  liveStreams: "Live queries open at once",
  requestsPerWindow: "Requests per rate-limit window",
  sandboxCpuMs: "Sandbox CPU ms per window",
};

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = "B";
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${unit}`;
}

const amount = (limit: string, n: number) =>
  limit === "storedBytes" ? formatBytes(n) : n.toLocaleString("en");

/** What is in use now of each limit the usage answer measures (the largest project or table's, for those). */
function inUse(usage: UsageView): Record<string, number | undefined> {
  const projects = Object.values(usage.current.byProject);
  const most = (values: number[]) => (values.length ? Math.max(...values) : 0);
  return {
    storedBytes: usage.current.storedBytes ?? undefined,
    projects: usage.current.projects,
    tablesPerProject: most(projects.map((p) => p.tables)),
    usersPerProject: most(projects.map((p) => p.users ?? 0)),
    apiKeysPerProject: most(projects.map((p) => p.apiKeys ?? 0)),
    webhooksPerProject: most(projects.map((p) => p.webhooks ?? 0)),
    rowsPerTable: most(projects.flatMap((p) => Object.values(p.byTable).map((t) => t.rows))),
  };
}

function warningText(w: UsageWarningView): string {
  const where = w.table
    ? ` in table ${w.table} of ${w.project}`
    : w.project
      ? ` in project ${w.project}`
      : "";
  const share = Math.round((100 * w.used) / Math.max(1, w.value));
  const label = LIMIT_LABELS[w.limit] ?? w.limit;
  return w.state === "full"
    ? `${label}${where}: ${amount(w.limit, w.used)} of ${amount(w.limit, w.value)} — the limit is reached; nothing more can be added until some is deleted.`
    : `${label}${where}: ${amount(w.limit, w.used)} of ${amount(w.limit, w.value)} (${share} %).`;
}

const sum = (points: UsagePointView[], pick: (p: UsagePointView) => number) =>
  points.reduce((total, p) => total + pick(p), 0);
const requestsOf = (p: UsagePointView, kind: keyof UsagePointView["requests"]) =>
  Object.values(p.requests[kind]).reduce((a, b) => a + b, 0);

export function Usage({ context }: { context: AdminContext }) {
  const { api } = context;
  const [range, setRange] = useState(DAY.value);
  const chosen = RANGES.find((r) => r.value === range) ?? DAY;
  const usage = useLoad(
    (signal) => {
      const to = new Date();
      const from = new Date(to.getTime() - chosen.days * 86_400_000);
      const query = new URLSearchParams({
        from: from.toISOString(),
        to: to.toISOString(),
        step: chosen.step,
      });
      return api.usage(query.toString(), signal);
    },
    [api, range],
  );
  const value = usage.value;
  const charts = useMemo(() => (value ? chartsOf(value.series.points) : undefined), [value]);
  const use = value ? inUse(value) : {};
  return (
    <section aria-labelledby="usage-title" aria-busy={usage.loading}>
      <ScreenHeading id="usage-title" title="Usage" />
      <LoadStatus what="the account's usage" load={usage} />
      {value && (
        <>
          <p>
            Plan <bdi class="strong">{value.plan}</bdi>
            {value.overridden.length > 0 && ` (with this account's own ${value.overridden.join(", ")})`}.
            Storage measured {value.current.measuredAt ? <Time iso={value.current.measuredAt} /> : "not yet"}.
          </p>
          {value.warnings.length > 0 && (
            <div class="card usage-warnings" role="status">
              <h2>Close to a limit</h2>
              <ul>
                {value.warnings.map((w) => (
                  <li key={`${w.limit}/${w.project ?? ""}/${w.table ?? ""}`} class={`usage-${w.state}`}>
                    {warningText(w)}
                  </li>
                ))}
              </ul>
              <p>Reads and deletes always work: delete rows, then the account can write again.</p>
            </div>
          )}
          <Table
            label="The plan's limits"
            rows={Object.entries(value.limits)}
            rowKey={([limit]) => limit}
            columns={[
              { title: "Limit", cell: ([limit]) => LIMIT_LABELS[limit] ?? limit },
              {
                title: "The plan allows",
                cell: ([limit, n]) => (n === null ? "No limit" : amount(limit, n)),
              },
              {
                title: "In use",
                cell: ([limit]) => {
                  const used = use[limit];
                  return used === undefined ? "—" : amount(limit, used);
                },
              },
            ]}
          />
        </>
      )}
      <div class="usage-range">
        <SelectField label="Range" value={range} options={RANGES} onChange={setRange} />
      </div>
      {value && charts && (
        <>
          <div class="usage-charts">
            <UsageChart title="Requests" unit="requests" times={charts.times} series={charts.requests} />
            <UsageChart title="Stored data" unit="bytes" times={charts.times} series={charts.storage} />
            <UsageChart title="Sandbox CPU time" unit="ms" times={charts.times} series={charts.cpu} />
            <UsageChart
              title="Webhook deliveries"
              unit="deliveries"
              times={charts.times}
              series={charts.hooks}
            />
            <UsageChart title="Live-query time" unit="minutes" times={charts.times} series={charts.live} />
          </div>
          <Table
            label={`Totals of the ${chosen.label.toLowerCase()}`}
            rows={totalsOf(value.series.points)}
            rowKey={(row) => row.what}
            columns={[
              { title: `Totals, ${chosen.label.toLowerCase()}`, cell: (row) => row.what },
              { title: "Amount", cell: (row) => row.amount },
            ]}
          />
        </>
      )}
    </section>
  );
}

function chartsOf(points: UsagePointView[]) {
  const times = points.map((p) => Date.parse(p.at) / 1000);
  const line = (label: string, i: number, values: (number | null)[]): ChartSeries => ({
    label,
    values,
    stroke: present(COLOURS[i % COLOURS.length], "a chart colour"),
  });
  const kinds = ["read", "write", "stream", "admin"] as const;
  return {
    times,
    requests: kinds.map((k, i) =>
      line(
        k,
        i,
        points.map((p) => requestsOf(p, k)),
      ),
    ),
    storage: [
      line(
        "stored bytes",
        0,
        points.map((p) => p.storedBytes),
      ),
    ],
    cpu: [
      line(
        "CPU ms",
        0,
        points.map((p) => p.sandboxCpuMs),
      ),
    ],
    hooks: (["delivered", "failed", "dead"] as const).map((o, i) =>
      line(
        o,
        i,
        points.map((p) => p.webhookDeliveries[o]),
      ),
    ),
    live: [
      line(
        "minutes",
        0,
        points.map((p) => p.liveStreamMinutes),
      ),
    ],
  };
}

function totalsOf(points: UsagePointView[]): { what: string; amount: string }[] {
  const n = (x: number) => Math.round(x).toLocaleString("en");
  const lastBytes = [...points].reverse().find((p) => p.storedBytes !== null)?.storedBytes;
  return [
    { what: "Reads", amount: n(sum(points, (p) => requestsOf(p, "read"))) },
    { what: "Writes", amount: n(sum(points, (p) => requestsOf(p, "write"))) },
    { what: "Live queries opened", amount: n(sum(points, (p) => requestsOf(p, "stream"))) },
    { what: "Admin API calls", amount: n(sum(points, (p) => requestsOf(p, "admin"))) },
    {
      what: "Refused or failed requests (4xx, 5xx)",
      amount: n(sum(points, (p) => Object.values(p.requests).reduce((t, c) => t + c["4xx"] + c["5xx"], 0))),
    },
    { what: "Stored data (last measured)", amount: lastBytes == null ? "—" : formatBytes(lastBytes) },
    { what: "Sandbox CPU ms", amount: n(sum(points, (p) => p.sandboxCpuMs)) },
    { what: "Webhook deliveries", amount: n(sum(points, (p) => p.webhookDeliveries.delivered)) },
    { what: "Live-query minutes", amount: n(sum(points, (p) => p.liveStreamMinutes)) },
  ];
}
