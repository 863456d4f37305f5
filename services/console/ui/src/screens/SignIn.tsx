/** Account administrators sign in with account, login and password (a new admin key each time). */
import { useRef, useState } from "preact/hooks";
import { adminLogin } from "../admin-api.ts";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { useFocusOn } from "../components/focus.ts";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { href } from "../route.ts";
import type { AdminSession } from "../session.ts";

export function SignIn(props: {
  notice: string | undefined;
  onSignedIn: (s: AdminSession) => void;
  /** The account, when known (a link's). */
  account?: string;
  /** Shown inside another screen (the explorer's): a section heading, not the page's. */
  embedded?: boolean;
}) {
  const [account, setAccount] = useState(props.account ?? "");
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const noticeRef = useRef<HTMLDivElement>(null);
  useFocusOn(noticeRef, props.notice);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const signedIn = await adminLogin(account, login, password);
      setPassword("");
      props.onSignedIn({
        account,
        login: signedIn.userIdentifier,
        role: signedIn.roles[0] ?? "reader",
        apikey: signedIn.apikey,
        expiration: signedIn.expiration,
      });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const form = (
    <form class="card" onSubmit={submit} aria-labelledby="signin-title">
      <h2 id="signin-title">Account administrator</h2>
      <Field
        label="Account"
        name="account"
        value={account}
        onInput={setAccount}
        required
        autocomplete="organization"
      />
      <Field label="Login" name="login" value={login} onInput={setLogin} required autocomplete="username" />
      <Field
        label="Password"
        name="password"
        type="password"
        value={password}
        onInput={setPassword}
        required
        autocomplete="current-password"
      />
      <ErrorNotice error={error} title="Sign-in failed" />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </div>
    </form>
  );
  if (props.embedded) return form;
  return (
    <main class="signin" id="main">
      <ScreenHeading title="Sign in">Tessera console</ScreenHeading>
      {props.notice && (
        <div class="notice warning" role="alert" tabIndex={-1} ref={noticeRef}>
          {props.notice}
        </div>
      )}
      {form}
      <p class="aside">
        Not an administrator? <a href={href("explorer")}>Explore data as a project user</a>.
      </p>
    </main>
  );
}
