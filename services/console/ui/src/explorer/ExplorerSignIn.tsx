/**
 * Choosing what the data explorer opens. A signed-in administrator opens a project
 * of their account with their own key (no password, no key of the project's).
 * Anyone may log in to a project's data as one of its users, through the project's
 * own `@authentication` — an administrator does so to see what that user's roles
 * allow: the form is drawn from its login fields, whatever the provider.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { AdminContext } from "../admin-context.ts";
import { anonymous, seg } from "../api.ts";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { useLoad } from "../components/useLoad.ts";
import type { DataSession, ExplorerTarget } from "../session.ts";

interface LoginField {
  name: string;
  display?: string;
  description?: string;
  type?: string;
  length?: number;
}

interface LoginInfo {
  fields: LoginField[];
  links?: { display?: string; href?: string }[];
}

type Target = ExplorerTarget;

const versionPath = (t: Target) => `/rest/${seg(t.account)}/${seg(t.project)}/${seg(t.version)}`;

export function ExplorerSignIn(props: {
  admin: AdminContext | undefined;
  /** The project version a link names (filled in). */
  initial: Target | undefined;
  notice: string | undefined;
  /** The administrator's sign-in form, for an account (shown here, in place, when asked for). */
  adminSignIn: (account: string) => ComponentChildren;
  onSignedIn: (s: DataSession) => void;
  /** Opens the project with the administrator's own key. */
  onOpen: (t: Target) => void;
}) {
  const { admin } = props;
  const [account, setAccount] = useState(admin?.session.account ?? props.initial?.account ?? "");
  const [project, setProject] = useState(props.initial?.project ?? "");
  const [version, setVersion] = useState(props.initial?.version ?? "v1");
  const [asAdmin, setAsAdmin] = useState(false);
  const [target, setTarget] = useState<Target>();
  const [info, setInfo] = useState<LoginInfo>();
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const projects = useLoad(async () => {
    if (!admin) return [];
    return (await admin.client.call<{ name: string }[]>("GET", `${admin.accountPath}/projects`)).body.map(
      (p) => p.name,
    );
  }, [admin]);

  function openAsAdmin(e: Event) {
    e.preventDefault();
    props.onOpen({ account, project, version });
  }

  async function choose(e: Event) {
    e.preventDefault();
    setError(undefined);
    setInfo(undefined);
    const t = { account, project, version };
    try {
      const r = await anonymous.call<LoginInfo>("GET", `${versionPath(t)}/@authentication`);
      setTarget(t);
      setInfo(r.body);
      setValues({});
    } catch (err) {
      setError(err);
    }
  }

  async function login(e: Event) {
    e.preventDefault();
    if (!target) return;
    setBusy(true);
    setError(undefined);
    try {
      const r = await anonymous.call<{
        apikey: string;
        expiration: string | null;
        userIdentifier: string;
        roles: string[];
      }>("POST", `${versionPath(target)}/@authentication`, { body: values });
      setValues({});
      props.onSignedIn({ ...target, ...r.body });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="explorer-signin-title" class="signin-wide">
      <ScreenHeading id="explorer-signin-title" title="Data explorer: log in">
        Data explorer
      </ScreenHeading>
      {props.notice && (
        <div class="notice warning" role="alert">
          {props.notice}
        </div>
      )}
      {props.initial && !admin && (
        <p class="notice info">
          This link opens <bdi>{props.initial.account}</bdi> / <bdi>{props.initial.project}</bdi> /{" "}
          <bdi>{props.initial.version}</bdi>: sign in, and it opens where it points.{" "}
          {!asAdmin && (
            <button type="button" class="link" onClick={() => setAsAdmin(true)}>
              Sign in as an administrator
            </button>
          )}
        </p>
      )}
      {asAdmin && !admin && props.adminSignIn(account)}
      <form class="card" onSubmit={admin ? openAsAdmin : choose} aria-label="Which project">
        <h2>1. Which project</h2>
        {admin ? (
          <p class="muted">
            Account <bdi>{admin.session.account}</bdi>. You open it as yourself: as an account{" "}
            {admin.session.role === "admin" ? "admin, with full access" : "reader, read only"}; every change
            is recorded in the audit trail under your name. To see what one of the project's users may do, log
            in as that user instead.
          </p>
        ) : (
          <Field label="Account" name="data-account" value={account} onInput={setAccount} required />
        )}
        {admin && projects.value && projects.value.length > 0 ? (
          <div class="field">
            <label for="data-project">Project</label>
            <select
              id="data-project"
              value={project}
              onChange={(e) => setProject((e.target as HTMLSelectElement).value)}
              required
            >
              <option value="">Choose…</option>
              {projects.value.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </div>
        ) : (
          <Field label="Project" name="data-project" value={project} onInput={setProject} required />
        )}
        <Field label="API version" name="data-version" value={version} onInput={setVersion} required />
        <div class="actions">
          {admin ? (
            <>
              <button type="submit" class="primary">
                Open as {admin.session.login}
              </button>
              <button type="button" onClick={choose}>
                Show the login form
              </button>
            </>
          ) : (
            <button type="submit">Show the login form</button>
          )}
        </div>
      </form>
      {info && target && (
        <form class="card" onSubmit={login} aria-labelledby="data-login-title">
          <h2 id="data-login-title">
            2. Log in to <bdi>{target.project}</bdi> (<bdi>{target.version}</bdi>)
          </h2>
          {info.fields.map((f) => (
            <Field
              key={f.name}
              label={f.display || f.name}
              name={`login-${f.name}`}
              type={f.type === "password" ? "password" : "text"}
              maxLength={f.length}
              hint={f.description}
              value={values[f.name] ?? ""}
              onInput={(v) => setValues((old) => ({ ...old, [f.name]: v }))}
            />
          ))}
          {info.links && info.links.length > 0 && (
            <ul class="links">
              {info.links.map((l) => (
                <li key={l.display ?? l.href}>{l.display ?? l.href}</li>
              ))}
            </ul>
          )}
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Log in
            </button>
          </div>
        </form>
      )}
      <ErrorNotice error={error} />
    </section>
  );
}
