/**
 * The signed-in administrator's account and self: the account's display name (role admin
 * changes it), and their own password — changed with the current one, after which the
 * console goes on with the new key the change answers (every older key stops working).
 */
import { useState } from "preact/hooks";
import { changeOwnPassword, disableAdminKey } from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { Outcome } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { FormCard } from "../components/FormCard.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { Time } from "../components/Time.tsx";
import { useAction } from "../components/useAction.ts";
import { useLoad } from "../components/useLoad.ts";

export function Account({ context }: { context: AdminContext }) {
  const { api, session } = context;
  const account = useLoad(api.account.get, [api]);
  const [displayName, setDisplayName] = useState<string>();
  const renaming = useAction();
  const shownName = displayName ?? account.value?.displayName ?? "";

  const rename = () => {
    void renaming.run(async () => {
      const r = await api.account.rename(shownName);
      setDisplayName(undefined);
      await account.reload();
      return r.displayName
        ? `The account is now called ${r.displayName}.`
        : "The account has no display name now.";
    });
  };

  return (
    <section aria-labelledby="account-title" aria-busy={account.loading}>
      <ScreenHeading id="account-title" title="Account" />
      <LoadStatus what="the account" load={account} />
      {account.value && (
        <p>
          Account <bdi class="strong">{account.value.name}</bdi>, created <Time iso={account.value.created} />
          . You are <bdi>{session.login}</bdi> ({session.role}).
        </p>
      )}
      <div class="account">
        {account.value &&
          (context.readOnly ? (
            <div class="card">
              <h2>The account's display name</h2>
              <p>{account.value.displayName ? <bdi>{account.value.displayName}</bdi> : "None."}</p>
            </div>
          ) : (
            <div>
              <FormCard
                title="The account's display name"
                submitLabel="Save display name"
                busy={renaming.busy}
                onSubmit={rename}
              >
                <Field
                  label="Display name"
                  name="display-name"
                  value={shownName}
                  onInput={setDisplayName}
                  maxLength={200}
                  hint="How people call the account; its name stays as it is. Empty: none."
                />
              </FormCard>
              <Outcome action={renaming} />
            </div>
          ))}
        <OwnPassword context={context} />
      </div>
    </section>
  );
}

function OwnPassword({ context }: { context: AdminContext }) {
  const { session } = context;
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const action = useAction();

  const change = () => {
    void action.run(async () => {
      if (next !== again) throw new Error("The new password and its repetition differ. Nothing was changed.");
      const r = await changeOwnPassword(session.account, session.login, current, next);
      if (r.changePasswordResult !== "success") {
        // The login issued a key all the same: it is not needed, the session's key still works.
        await disableAdminKey(session.account, r.apikey).catch(() => {});
        throw new Error(
          `The password was not changed: ${r.changePasswordMessage ?? "the server refused it"}`,
        );
      }
      // After the change the answer's key is the only one of theirs that works: go on with it.
      context.renew({ ...session, apikey: r.apikey, expiration: r.expiration });
      setCurrent("");
      setNext("");
      setAgain("");
      return "Your password is changed. Your other sessions were signed out; this one goes on.";
    });
  };

  return (
    <div>
      <FormCard title="Your password" submitLabel="Change password" busy={action.busy} onSubmit={change}>
        <input type="text" name="username" autocomplete="username" value={session.login} hidden readOnly />
        <Field
          label="Current password"
          name="current-password"
          type="password"
          value={current}
          onInput={setCurrent}
          required
          autocomplete="current-password"
        />
        <Field
          label="New password"
          name="new-password"
          type="password"
          value={next}
          onInput={setNext}
          required
          minLength={8}
          autocomplete="new-password"
          hint="At least 8 characters. Every other key of yours stops working."
        />
        <Field
          label="New password again"
          name="new-password-again"
          type="password"
          value={again}
          onInput={setAgain}
          required
          minLength={8}
          autocomplete="new-password"
        />
      </FormCard>
      <Outcome action={action} />
    </div>
  );
}
