/** The console: an administrator's session and screens, and the data explorer. */
import "../styles.css";
import { render } from "preact";
import { useMemo, useState } from "preact/hooks";
import { adminContext } from "../admin-context.ts";
import { forgetAllDrafts } from "../drafts.ts";
import { useExpiresSoon } from "../expiry.ts";
import { Explorer } from "../explorer/Explorer.tsx";
import { go, href, useRoute } from "../route.ts";
import { Account } from "../screens/Account.tsx";
import { Admins } from "../screens/Admins.tsx";
import { Audit } from "../screens/Audit.tsx";
import { Project } from "../screens/Project.tsx";
import { Projects } from "../screens/Projects.tsx";
import { SignIn } from "../screens/SignIn.tsx";
import { Usage } from "../screens/Usage.tsx";
import { type AdminSession, adminSessions, dataSessions, explorerTargets } from "../session.ts";

/** How long before the admin key expires the console warns (and offers to sign in again). */
const EXPIRY_WARNING_MS = 5 * 60_000;

import { useSession } from "../use-session.ts";

const NAV = [
  { route: "projects", label: "Projects" },
  { route: "admins", label: "Administrators" },
  { route: "audit", label: "Audit trail" },
  { route: "usage", label: "Usage" },
  { route: "explorer", label: "Data explorer" },
];

function App() {
  const admin = useSession(adminSessions, { name: "admin session", again: "Sign in again." });
  const route = useRoute();
  // A project user's data session (the explorer's "log in as a user"), kept here so that signing out ends it.
  const data = useSession(dataSessions, { name: "data session", again: "Log in again." });
  const context = useMemo(
    () =>
      admin.session &&
      admin.client &&
      admin.dataClient &&
      adminContext(admin.session, admin.client, admin.dataClient, admin.signIn),
    [admin.client],
  );
  // Signing out on purpose forgets unsaved drafts and ends every session of the tab (the
  // admin key, and so the explorer's view with it; a project user's key); one that expired keeps the drafts.
  const logOut = () => {
    forgetAllDrafts();
    explorerTargets.write(undefined);
    void data.signOut();
    void admin.signOut();
  };

  const [first = "projects", ...rest] = route;
  if (first === "explorer") {
    return (
      <Layout context={context} current="explorer" onSignOut={logOut} onSignedInAgain={admin.signIn}>
        <Explorer
          admin={context}
          data={data}
          adminNotice={admin.notice}
          adminSignIn={(account) => (
            <SignIn notice={undefined} account={account} embedded onSignedIn={admin.signIn} />
          )}
        />
      </Layout>
    );
  }
  if (!context) {
    return (
      <SignIn
        notice={admin.notice}
        onSignedIn={(s) => {
          admin.signIn(s);
          // Back where the session ended (an expiry, a 401), else the projects.
          if (route.length === 0) go("projects");
        }}
      />
    );
  }
  let screen = <Projects context={context} />;
  if (first === "projects" && rest[0]) screen = <Project context={context} name={rest[0]} tab={rest[1]} />;
  if (first === "new-project") screen = <Project context={context} name={undefined} tab="definition" />;
  if (first === "admins") screen = <Admins context={context} />;
  if (first === "audit") screen = <Audit context={context} />;
  if (first === "account") screen = <Account context={context} />;
  if (first === "usage") screen = <Usage context={context} />;
  return (
    <Layout context={context} current={first} onSignOut={logOut} onSignedInAgain={admin.signIn}>
      {screen}
    </Layout>
  );
}

function Layout(props: {
  context: ReturnType<typeof adminContext> | undefined;
  current: string;
  onSignOut: () => void;
  /** A new admin key from signing in again before the old one expires (nothing else changes). */
  onSignedInAgain: (s: AdminSession) => void;
  children: preact.ComponentChildren;
}) {
  const { context } = props;
  const soon = useExpiresSoon(context?.session.expiration, EXPIRY_WARNING_MS);
  const [renewing, setRenewing] = useState(false);
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById("main")?.focus()}>
        Skip to content
      </button>
      {props.current === "explorer" && (
        <button
          type="button"
          class="skip"
          onClick={() =>
            // The grid's current cell (its one Tab stop), or the content while there is no grid.
            (
              document.querySelector<HTMLElement>('table[role="grid"] td[tabindex="0"]') ??
              document.getElementById("main")
            )?.focus()
          }
        >
          Skip to the rows
        </button>
      )}
      <header class="topbar">
        <span class="brand">Tessera console</span>
        <nav aria-label="Sections">
          {(context ? NAV : NAV.slice(-1)).map((n) => (
            <a
              key={n.route}
              href={href(n.route)}
              aria-current={props.current === n.route ? "page" : undefined}
            >
              {n.label}
            </a>
          ))}
        </nav>
        <span class="who">
          {context ? (
            <>
              <a
                class="who-name"
                href={href("account")}
                aria-current={props.current === "account" ? "page" : undefined}
              >
                <span class="sr-only">Your account: </span>
                {context.session.login} @ {context.session.account}
              </a>
              <span class={`badge role-${context.session.role === "admin" ? "admin" : "reader"}`}>
                {context.session.role}
              </span>
              <button type="button" onClick={props.onSignOut}>
                Sign out
              </button>
            </>
          ) : (
            <a href={href("projects")}>Administrator sign-in</a>
          )}
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {context && soon && (
          <div class="notice warning expiry-warning" role="status">
            <p>
              Your administrator session ends at{" "}
              {new Date(context.session.expiration ?? "").toISOString().slice(11, 16)} UTC. Sign in again to
              go on where you are: nothing on this screen is lost.{" "}
              {!renewing && (
                <button type="button" onClick={() => setRenewing(true)}>
                  Sign in again
                </button>
              )}
            </p>
            {renewing && (
              <SignIn
                notice={undefined}
                account={context.session.account}
                embedded
                onSignedIn={(s) => {
                  setRenewing(false);
                  props.onSignedInAgain(s);
                }}
              />
            )}
          </div>
        )}
        {context?.readOnly && (
          <p class="notice info">
            You are signed in as a reader: you can look at everything and change nothing.
          </p>
        )}
        {props.children}
      </main>
    </>
  );
}

const root = document.getElementById("app");
if (!root) throw new Error("the page has no #app element to render the console in");
render(<App />, root);
