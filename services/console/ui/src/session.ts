/**
 * Sessions of the console, kept in sessionStorage only (gone with the tab, never in
 * localStorage or a URL): the administrator's admin key, the data explorer's
 * project key (a project user's login), and the project an administrator explores
 * with their own key.
 */

export interface AdminSession {
  account: string;
  login: string;
  role: string;
  apikey: string;
  expiration: string | null;
}

export interface DataSession {
  account: string;
  project: string;
  version: string;
  apikey: string;
  userIdentifier: string;
  roles: string[];
  expiration: string | null;
}

export interface SessionKind<S> {
  read(): S | undefined;
  write(session: S | undefined): void;
  /** The `Authorization` header of the session's calls. */
  authorization(session: S): string;
  /** The `@authentication` path that issued the key (where it is disabled on sign-out). */
  authenticationPath(session: S): string;
  /** The `Authorization` header of data-API calls, when the session's key opens the data API too. */
  dataAuthorization?(session: S): string;
}

/** A project version the data explorer opens. */
export interface ExplorerTarget {
  account: string;
  project: string;
  version: string;
}

function stored<S>(name: string): Pick<SessionKind<S>, "read" | "write"> {
  return {
    read() {
      try {
        const text = window.sessionStorage.getItem(name);
        return text ? (JSON.parse(text) as S) : undefined;
      } catch {
        return undefined;
      }
    },
    write(value) {
      if (value === undefined) window.sessionStorage.removeItem(name);
      else window.sessionStorage.setItem(name, JSON.stringify(value));
    },
  };
}

const seg = encodeURIComponent;

export const adminSessions: SessionKind<AdminSession> = {
  ...stored<AdminSession>("tessera.console.admin"),
  authorization: (s) => `Bearer ${s.apikey}`,
  authenticationPath: (s) => `/admin/v1/accounts/${seg(s.account)}/@authentication`,
  // An administrator's key opens the account's projects' data too (docs/data-api.md).
  dataAuthorization: (s) => `Tessera ${s.apikey}:1`,
};

/** The project an administrator explores with their own key (forgotten at sign-out). */
export const explorerTargets = stored<ExplorerTarget>("tessera.console.explore");

export const dataSessions: SessionKind<DataSession> = {
  ...stored<DataSession>("tessera.console.data"),
  authorization: (s) => `Tessera ${s.apikey}:1`,
  authenticationPath: (s) => `/rest/${seg(s.account)}/${seg(s.project)}/${seg(s.version)}/@authentication`,
};
