/**
 * The data explorer: the tables and resources of a project version, their rows, one
 * row in detail, inserts, and the transaction summary of every write. A signed-in
 * administrator explores with their own key (full access to the account's projects,
 * every write audited under their name); anyone may instead log in as one of the
 * project's users (its own key, from the project's `@authentication`) to see what
 * that user's roles allow.
 * What it shows — table, filter, order, page, open row — is in the URL (explorer-url.ts).
 */
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { AdminContext } from "../admin-context.ts";
import { type Client, localPath, type RequestOptions, seg } from "../api.ts";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { useLoad } from "../components/useLoad.ts";
import { currentRoute, goWith, hrefWith, useRoute, useRouteQuery } from "../route.ts";
import { type DataSession, type ExplorerTarget, explorerTargets } from "../session.ts";
import type { Session } from "../use-session.ts";
import { type Collection, loadCollections } from "./columns.ts";
import { ExplorerSignIn } from "./ExplorerSignIn.tsx";
import { type ExplorerView, parseView, samePlace, viewOfTable, viewRoute } from "./explorer-url.ts";
import { InsertForm } from "./InsertForm.tsx";
import { RowDetail } from "./RowDetail.tsx";
import { RowGrid } from "./RowGrid.tsx";
import { metadataOf, type Row } from "./rows.ts";
import { TxSummary, type WriteOutcome } from "./TxSummary.tsx";

/** Whose view the workspace shows: the project version and who reads it. */
type WorkspaceView = ExplorerTarget & Pick<DataSession, "userIdentifier" | "roles">;

/** One project version: another one is another workspace (nothing of this one's state comes along). */
const placeKey = (t: ExplorerTarget) => `${t.account}/${t.project}/${t.version}`;

const versionRoot = (t: ExplorerTarget) => `/rest/${seg(t.account)}/${seg(t.project)}/${seg(t.version)}`;

export function Explorer(props: {
  admin: AdminContext | undefined;
  /** A project user's session (a login through the project's `@authentication`). */
  data: Session<DataSession>;
  /** Why the administrator's session ended, if it did. */
  adminNotice: string | undefined;
  /** The administrator's sign-in form, shown in place (a link opened in a fresh tab stays where it points). */
  adminSignIn: (account: string) => ComponentChildren;
}) {
  const { admin, data } = props;
  const view = parseView(useRoute(), useRouteQuery());
  const [stored, setStored] = useState<ExplorerTarget | undefined>(explorerTargets.read);
  // The place in the address comes first: a link names its project.
  const target = view.place ?? stored;
  const open = (t: ExplorerTarget | undefined) => {
    explorerTargets.write(t);
    setStored(t);
    const [segments, params] = viewRoute(viewOfTable(t, undefined));
    goWith(segments, params);
  };
  if (data.session && data.client && (!view.place || samePlace(view.place, data.session))) {
    const { session } = data;
    return (
      <Workspace
        key={placeKey(session)}
        client={data.client}
        place={session}
        session={session}
        leave="Log out of the project"
        onLogOut={() =>
          // Then back to choosing a project: the place is not opened again with another key.
          void data.signOut().then(() => goWith(["explorer"], {}))
        }
      />
    );
  }
  // The administrator's own key, for the project they chose (only in their account).
  if (admin && target && target.account === admin.session.account) {
    return (
      <Workspace
        key={placeKey(target)}
        client={admin.dataClient}
        place={target}
        session={{ ...target, userIdentifier: admin.session.login, roles: [`account ${admin.session.role}`] }}
        readOnly={admin.readOnly}
        leave="Close the project"
        onLogOut={() => open(undefined)}
      />
    );
  }
  return (
    <ExplorerSignIn
      key={target ? placeKey(target) : ""}
      admin={admin}
      initial={target}
      notice={data.notice ?? (admin ? undefined : props.adminNotice)}
      adminSignIn={props.adminSignIn}
      onSignedIn={(s) => {
        explorerTargets.write(undefined);
        setStored(undefined);
        data.signIn(s);
      }}
      onOpen={open}
    />
  );
}

function useExplorerView(
  place: ExplorerTarget,
): [ExplorerView, (change: Partial<ExplorerView>, replace?: boolean) => void] {
  const view = parseView(useRoute(), useRouteQuery());
  const change = (c: Partial<ExplorerView>, replace = false) => {
    const [segments, params] = viewRoute({ ...view, place, ...c });
    goWith(segments, params, { replace });
  };
  // An address without the project (`#/explorer`, `#/explorer/<table>`) is completed in place,
  // from the address as it is now (its path and query may have reached this render apart).
  useEffect(() => {
    const now = parseView(...currentRoute());
    if (!samePlace(now.place, place)) {
      const [segments, params] = viewRoute({ ...now, place });
      goWith(segments, params, { replace: true });
    }
  }, [view.place?.account, view.place?.project, view.place?.version, view.table]);
  return [view, change];
}

function Workspace(props: {
  client: Client;
  place: ExplorerTarget;
  session: WorkspaceView;
  /** An account reader's session: every read, no write control (the server refuses writes anyway). */
  readOnly?: boolean;
  /** The label of the button that leaves the project. */
  leave: string;
  onLogOut: () => void;
}) {
  const { session } = props;
  // One client for the workspace's life, calling with the latest key: a new key (signing in
  // again before the old one expires) reloads nothing and loses nothing typed.
  const latestClient = useRef(props.client);
  latestClient.current = props.client;
  const client = useMemo<Client>(
    () => ({ call: <T,>(m: string, p: string, o?: RequestOptions) => latestClient.current.call<T>(m, p, o) }),
    [],
  );
  const { account, project, version } = props.place;
  const place = { account, project, version };
  const root = versionRoot(place);
  const [view, setView] = useExplorerView(place);
  const [inserting, setInserting] = useState(false);
  // A write's summary, and where it was made (the table and the open row): it describes that
  // place, and goes once the user moves to another row or table.
  const here = `${view.table ?? ""}\n${view.row ?? ""}`;
  const [outcome, setOutcome] = useState<{ write: WriteOutcome; at: string }>();
  useEffect(() => {
    if (outcome && outcome.at !== here) setOutcome(undefined);
  }, [here]);
  const [refresh, setRefresh] = useState(0);

  const collections = useLoad(() => loadCollections(client, root), [client, root]);
  const current = collections.value?.find((c) => c.name === view.table);
  const columns = useLoad(async () => (current ? await current.columns() : undefined), [current]);
  const openRow = useLoad(async () => {
    if (!view.row) return undefined;
    const r = await client.call<Row[]>("GET", `${root}/${view.row}`);
    if (!r.body?.[0]) throw new Error("The row no longer exists (someone deleted it).");
    return r.body[0];
  }, [client, root, view.row]);

  const pathUnderRoot = (row: Row) => {
    const href = metadataOf(row).href;
    const path = href ? localPath(href) : "";
    return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : undefined;
  };
  const linkTo = (c: Collection) => hrefWith(...viewRoute(viewOfTable(place, c.name)));
  const choose = () => {
    setOutcome(undefined);
    setInserting(false);
  };
  const written = (o: WriteOutcome, deleted = false) => {
    // A deleted row closes: its summary stays with the table.
    setOutcome({ write: o, at: deleted ? `${view.table ?? ""}\n` : here });
    setRefresh((n) => n + 1);
    if (deleted) setView({ row: undefined }, true);
  };

  const group = (kind: Collection["kind"], title: string) => (
    <>
      <h2>{title}</h2>
      <ul>
        {collections.value
          ?.filter((c) => c.kind === kind)
          .map((c) => (
            <li key={c.name}>
              <a href={linkTo(c)} aria-current={current === c ? "page" : undefined} onClick={choose}>
                {c.name}
              </a>
            </li>
          ))}
      </ul>
    </>
  );

  return (
    <section aria-labelledby="explorer-title">
      <div class="heading">
        <ScreenHeading
          id="explorer-title"
          title={`Data: ${session.account} / ${session.project} / ${session.version}`}
        />
        <span class="who">
          {session.userIdentifier} <span class="muted">({session.roles.join(", ")})</span>
          <button type="button" onClick={props.onLogOut}>
            {props.leave}
          </button>
        </span>
      </div>
      <LoadStatus what="tables and resources" load={collections} />
      <div class="explorer">
        <nav class="collections" aria-label="Tables and resources" aria-busy={collections.loading}>
          {group("table", "Tables")}
          {group("resource", "Resources")}
        </nav>
        <div class="workspace">
          {!current && !collections.loading && (
            <p class="empty">
              {view.table
                ? `There is no table or resource ${view.table} here.`
                : "Choose a table or a resource."}
            </p>
          )}
          {current && (
            <>
              <div class="heading">
                <h2>
                  {current.kind === "table" ? "Table" : "Resource"} <bdi>{current.name}</bdi>
                </h2>
                {columns.value && !props.readOnly && (
                  <button type="button" onClick={() => setInserting(true)}>
                    New row
                  </button>
                )}
              </div>
              <LoadStatus what="columns" load={columns} />
              {!columns.loading && !columns.error && (
                <RowGrid
                  key={current.name}
                  client={client}
                  collectionPath={`${root}/${seg(current.name)}`}
                  name={current.name}
                  columns={columns.value}
                  readOnly={props.readOnly}
                  childNames={current.children}
                  view={view}
                  onView={setView}
                  refresh={refresh}
                  openHref={openRow.value && metadataOf(openRow.value).href}
                  onOpen={(row) => {
                    setOutcome(undefined);
                    setView({ row: pathUnderRoot(row) });
                  }}
                  onWritten={(o) => written(o)}
                />
              )}
              {view.row && <LoadStatus what="the row" load={openRow} />}
              {view.row && openRow.value && (
                <RowDetail
                  client={client}
                  row={openRow.value}
                  columns={columns.value}
                  readOnly={props.readOnly}
                  children={current.children}
                  onWritten={written}
                  onClose={() => {
                    setView({ row: undefined });
                    // Back to the grid's current cell, where the keyboard was.
                    requestAnimationFrame(() =>
                      document.querySelector<HTMLElement>('table[role="grid"] td[tabindex="0"]')?.focus(),
                    );
                  }}
                />
              )}
              <TxSummary outcome={outcome?.at === here ? outcome.write : undefined} />
              {inserting && columns.value && (
                <InsertForm
                  client={client}
                  collectionPath={`${root}/${seg(current.name)}`}
                  title={current.name}
                  columns={columns.value}
                  onClose={() => setInserting(false)}
                  onInserted={(o) => {
                    setInserting(false);
                    written(o);
                  }}
                />
              )}
            </>
          )}
        </div>
      </div>
    </section>
  );
}
