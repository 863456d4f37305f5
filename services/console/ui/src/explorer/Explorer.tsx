/**
 * The data explorer: the tables and resources of a project version, their rows, one
 * row in detail, inserts, and the transaction summary of every write. A signed-in
 * administrator explores with their own key (full access to the account's projects,
 * every write audited under their name); anyone may instead log in as one of the
 * project's users (its own key, from the project's `@authentication`) to see what
 * that user's roles allow.
 */
import { useState } from "preact/hooks";
import type { AdminContext } from "../admin-context.ts";
import { type Client, seg } from "../api.ts";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { useLoad } from "../components/useLoad.ts";
import { type DataSession, type ExplorerTarget, explorerTargets } from "../session.ts";
import type { Session } from "../use-session.ts";
import { ExplorerSignIn } from "./ExplorerSignIn.tsx";
import { type AttributeInfo, InsertForm } from "./InsertForm.tsx";
import { RowDetail } from "./RowDetail.tsx";
import { RowGrid } from "./RowGrid.tsx";
import type { Row } from "./rows.ts";
import { TxSummary, type WriteOutcome } from "./TxSummary.tsx";

interface Collection {
  kind: "table" | "resource";
  name: string;
  attributes: () => Promise<AttributeInfo[]>;
}

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

function Workspace(props: {
  client: Client;
  root: string;
  session: WorkspaceView;
  /** The label of the button that leaves the project. */
  leave: string;
  onLogOut: () => void;
}) {
  const { client, root, session } = props;
  const [current, setCurrent] = useState<Collection>();
  const [open, setOpen] = useState<Row>();
  const [inserting, setInserting] = useState<AttributeInfo[]>();
  const [outcome, setOutcome] = useState<WriteOutcome>();
  const [refresh, setRefresh] = useState(0);
  const [error, setError] = useState<unknown>();

  const collections = useLoad(async () => {
    const [tables, resources] = await Promise.all([
      client.call<{ name: string }[]>("GET", `${root}/@tables`),
      client.call<{ name: string; attributes: { name: string; type: string }[] }[]>(
        "GET",
        `${root}/@resources`,
      ),
    ]);
    const list: Collection[] = [
      ...tables.body.map(
        (t): Collection => ({
          kind: "table",
          name: t.name,
          attributes: async () =>
            (await client.call<{ columns: AttributeInfo[] }>("GET", `${root}/@tables/${seg(t.name)}`)).body
              .columns,
        }),
      ),
      ...resources.body.map(
        (r): Collection => ({ kind: "resource", name: r.name, attributes: async () => r.attributes }),
      ),
    ];
    return list;
  }, [client, root]);

  const choose = (c: Collection) => {
    setCurrent(c);
    setOpen(undefined);
    setOutcome(undefined);
  };
  const written = (o: WriteOutcome, deleted = false) => {
    setOutcome(o);
    setRefresh((n) => n + 1);
    if (deleted) setOpen(undefined);
  };
  async function startInsert() {
    if (!current) return;
    setError(undefined);
    try {
      setInserting(await current.attributes());
    } catch (err) {
      setError(err);
    }
  }

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
                aria-current={current?.name === c.name && current.kind === kind ? "true" : undefined}
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
      <ErrorNotice error={error} />
      <LoadStatus what="tables and resources" load={collections} />
      <div class="explorer">
        <nav class="collections" aria-label="Tables and resources" aria-busy={collections.loading}>
          {group("table", "Tables")}
          {group("resource", "Resources")}
        </nav>
        <div class="workspace">
          {!current && <p class="empty">Choose a table or a resource.</p>}
          {current && (
            <>
              <div class="heading">
                <h2>
                  {current.kind === "table" ? "Table" : "Resource"} {current.name}
                </h2>
                <button type="button" onClick={startInsert}>
                  New row
                </button>
              </div>
              <RowGrid
                client={client}
                collectionPath={`${root}/${seg(current.name)}`}
                refresh={refresh}
                onOpen={(row) => {
                  setOutcome(undefined);
                  setOpen(row);
                }}
              />
              {open && (
                <RowDetail
                  client={client}
                  row={open}
                  onWritten={written}
                  onClose={() => setOpen(undefined)}
                />
              )}
              <TxSummary outcome={outcome} />
              {inserting && (
                <InsertForm
                  client={client}
                  collectionPath={`${root}/${seg(current.name)}`}
                  title={current.name}
                  attributes={inserting}
                  onClose={() => setInserting(undefined)}
                  onInserted={(o) => {
                    setInserting(undefined);
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
