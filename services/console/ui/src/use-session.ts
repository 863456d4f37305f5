/**
 * A signed-in session of one kind: its client, signed out (with the reason) when the
 * key's expiration passes or any call answers 401, and on request (disabling the key).
 */
import { useMemo, useState } from "preact/hooks";
import { type ApiFailure, anonymous, type Client, clientWith } from "./api.ts";
import { useExpiry } from "./expiry.ts";
import type { SessionKind } from "./session.ts";

export interface Session<S> {
  session: S | undefined;
  client: Client | undefined;
  /** The client of data-API calls, for a kind whose key opens the data API (`dataAuthorization`). */
  dataClient: Client | undefined;
  /** Why the last session ended. */
  notice: string | undefined;
  signIn(session: S): void;
  signOut(): Promise<void>;
}

export function useSession<S extends { apikey: string; expiration: string | null }>(
  kind: SessionKind<S>,
  words: { name: string; again: string },
): Session<S> {
  const [session, setSession] = useState<S | undefined>(kind.read);
  const [notice, setNotice] = useState<string>();
  const end = (reason: string) => {
    kind.write(undefined);
    setSession(undefined);
    setNotice(reason);
  };
  useExpiry(session?.expiration, () => end(`Your ${words.name} has expired. ${words.again}`));
  const unauthorized = (failure: ApiFailure) =>
    end(`You were signed out: ${failure.message}. ${words.again}`);
  const client = useMemo(() => session && clientWith(kind.authorization(session), unauthorized), [session]);
  const dataClient = useMemo(
    () => session && kind.dataAuthorization && clientWith(kind.dataAuthorization(session), unauthorized),
    [session],
  );
  return {
    session,
    client,
    dataClient,
    notice,
    signIn(s) {
      kind.write(s);
      setNotice(undefined);
      setSession(s);
    },
    async signOut() {
      if (!session) return;
      // The key stops working at once; a failure here (already expired) changes nothing.
      await anonymous
        .call("POST", kind.authenticationPath(session), { body: { apikey: session.apikey, disable: true } })
        .catch(() => {});
      end(`You have signed out of your ${words.name}.`);
    },
  };
}
