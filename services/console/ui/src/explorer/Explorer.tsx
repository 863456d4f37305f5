/**
 * The data explorer: the tables and resources of a project version, their rows, one
 * row in detail, inserts, and the transaction summary of every write. A signed-in
 * administrator explores with their own key (full access to the account's projects,
 * every write audited under their name); anyone may instead log in as one of the
 * project's users (its own key, from the project's `@authentication`) to see what
 * that user's roles allow.
 * What it shows — table, filter, order, page, open row — is in the URL (explorer-url.ts).
 */
import { useState } from "preact/hooks";
import type { AdminContext } from "../admin-context.ts";
import { type Client, localPath, seg } from "../api.ts";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { useLoad } from "../components/useLoad.ts";
import { goWith, useRoute, useRouteQuery } from "../route.ts";
import { type DataSession, type ExplorerTarget, explorerTargets } from "../session.ts";
import type { Session } from "../use-session.ts";
import { type Collection, loadCollections } from "./columns.ts";
import { ExplorerSignIn } from "./ExplorerSignIn.tsx";
import { type ExplorerView, parseView, viewOfTable, viewRoute } from "./explorer-url.ts";
import { InsertForm } from "./InsertForm.tsx";
import { RowDetail } from "./RowDetail.tsx";
import { RowGrid } from "./RowGrid.tsx";
import { metadataOf, type Row } from "./rows.ts";
import { TxSummary, type WriteOutcome } from "./TxSummary.tsx";

/** Whose view the workspace shows: the project version and who reads it. */
type WorkspaceView = ExplorerTarget & Pick<DataSession, "userIdentifier" | "roles">;

const versionRoot = (t: ExplorerTarget) => `/rest/${seg(t.account)}/${seg(t.project)}/${seg(t.version)}`;

export function Explorer(props: {
  admin: AdminContext | undefined;
  /** A project user's session (a login through the project's `@authentication`). */
  data: Session<DataSession>;
  /** Why the administrator's session ended, if it did. */
  adminNotice: string | undefined;
}) {
  const { admin, data } = props;
  const [target, setTarget] = useState<ExplorerTarget | undefined>(explorerTargets.read);
  const open = (t: ExplorerTarget | undefined) => {
    explorerTargets.write(t);
    setTarget(t);
  };
  if (data.session && data.client) {
    const { session } = data;
    return (
      <Workspace
        client={data.client}
        root={versionRoot(session)}
        session={session}
        leave="Log out of the project"
        onLogOut={() => void data.signOut()}
      />
    );
  }
  // The administrator's own key, for the project they chose (only in their account).
  if (admin && target && target.account === admin.session.account) {
    return (
      <Workspace
        client={admin.dataClient}
        root={versionRoot(target)}
        session={{ ...target, userIdentifier: admin.session.login, roles: [`account ${admin.session.role}`] }}
        readOnly={admin.readOnly}
        leave="Close the project"
        onLogOut={() => open(undefined)}
      />
    );
  }
  return (
    <ExplorerSignIn
      admin={admin}
      notice={data.notice ?? (admin ? undefined : props.adminNotice)}
      onSignedIn={(s) => {
        open(undefined);
        data.signIn(s);
      }}
      onOpen={open}
    />
  );
}

function useExplorerView(): [ExplorerView, (change: Partial<ExplorerView>, replace?: boolean) => void] {
  const view = parseView(useRoute(), useRouteQuery());
  const change = (c: Partial<ExplorerView>, replace = false) => {
    const [segments, params] = viewRoute({ ...view, ...c });
    goWith(segments, params, { replace });
  };
  return [view, change];
}

function Workspace(props: {
  client: Client;
  root: string;
  session: WorkspaceView;
  /** An account reader's session: every read, no write control (the server refuses writes anyway). */
  readOnly?: boolean;
  /** The label of the button that leaves the project. */
  leave: string;
  onLogOut: () => void;
}) {
  const { client, root, session } = props;
  const [view, setView] = useExplorerView();
  const [inserting, setInserting] = useState(false);
  const [outcome, setOutcome] = useState<WriteOutcome>();
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
  const choose = (c: Collection) => {
    setOutcome(undefined);
    setInserting(false);
    const [segments, params] = viewRoute(viewOfTable(c.name));
    goWith(segments, params);
  };
  const written = (o: WriteOutcome, deleted = false) => {
    setOutcome(o);
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
              <button
                type="button"
                class="link"
                aria-current={current === c ? "true" : undefined}
                onClick={() => choose(c)}
              >
                {c.name}
              </button>
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
                  onClose={() => setView({ row: undefined })}
                />
              )}
              <TxSummary outcome={outcome} />
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
