/** Account administrators sign in with account, login and password (a new admin key each time). */
import { useRef, useState } from "preact/hooks";
import { anonymous, seg } from "../api.ts";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { useFocusOn } from "../components/focus.ts";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { href } from "../route.ts";
import type { AdminSession } from "../session.ts";

interface LoginAnswer {
  apikey: string;
  expiration: string | null;
  userIdentifier: string;
  roles: string[];
}

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
      const r = await anonymous.call<LoginAnswer>(
        "POST",
        `/admin/v1/accounts/${seg(account)}/@authentication`,
        {
          body: { username: login, password },
        },
      );
      setPassword("");
      props.onSignedIn({
        account,
        login: r.body.userIdentifier,
        role: r.body.roles[0] ?? "reader",
        apikey: r.body.apikey,
        expiration: r.body.expiration,
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
