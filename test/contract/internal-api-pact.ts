/**
 * What the consumer (auth) and provider (data) contract tests share: the pact's
 * participants and file, the provider states, and the fixture the states set up.
 * The consumer test writes the pact; the provider test replays it against the real
 * data service. See docs/contracts.md.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

// The Pact core sends anonymous usage metrics unless this is set; tests run offline.
process.env.PACT_DO_NOT_TRACK ??= "true";

export const CONSUMER = "tessera-auth";
export const PROVIDER = "tessera-data";

export const PACT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../pacts");
export const PACT_FILE = path.join(PACT_DIR, `${CONSUMER}-${PROVIDER}.json`);

/** Pact's own log level (its native core logs to stdout); PACT_LOG_LEVEL=debug to see every request. */
export const PACT_LOG_LEVEL = (process.env.PACT_LOG_LEVEL ?? "warn") as
  | "trace"
  | "debug"
  | "info"
  | "warn"
  | "error";

/** The provider states the consumer names and the provider test must set up. */
export const STATES = {
  demoWithAlice: "project acme/demo exists with user alice",
  demoWithBrief: "project acme/demo exists with user brief, who has her own key lifetime",
  noMissingProject: "no project acme/missing",
  customWithIdentityFields:
    "project acme/mailers has a custom provider that declares its identity field email",
  oidcProject: "project acme/federated has an oidc provider",
  customShowingItsMessage:
    "project acme/outspoken has a custom provider that refuses logins in its own words",
  acmeWithAdmin: "account acme exists with admin ann",
  noMissingAccount: "no account nowhere",
} as const;

/** The fixture behind the states (the provider creates it; the consumer's requests use it). */
export const FIXTURE = {
  account: "acme",
  project: "demo",
  version: "v1",
  missingProject: "missing",
  /** A custom provider's project that declares `authentication.identityFields`. */
  customProject: { name: "mailers", identityFields: ["email"] },
  /** A custom provider's project that shows the client its own message when it refuses a login. */
  messageProject: { name: "outspoken", message: "Account locked" },
  /** A project whose logins are tokens of an OpenID Connect issuer (`provider: "oidc"`). */
  oidcProject: { name: "federated", issuer: "https://login.example.com/realms/acme", audience: "tessera" },
  missingVersion: "v9",
  alice: {
    username: "alice",
    password: "alice-password",
    roles: ["Full access"],
    globals: { region: "north" },
  },
  brief: {
    username: "brief",
    password: "brief-password",
    roles: ["No delete"],
    globals: {},
    keyLifetimeSeconds: 60,
  },
  newPassword: "alice-new-password",
  /** An account administrator of `account`. */
  admin: { login: "ann", password: "ann-admin-password", role: "admin" },
  newAdminPassword: "ann-new-admin-password",
  missingAccount: "nowhere",
  wrongPassword: "not-alice-password",
} as const;
