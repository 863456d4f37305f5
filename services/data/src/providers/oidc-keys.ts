/**
 * The published keys of an OpenID Connect issuer, for the `oidc` provider:
 * its discovery document (`<issuer>/.well-known/openid-configuration`) names
 * the key set (`jwks_uri`); both are fetched through the sandbox's egress
 * policy (sandbox/fetch.ts: the project's hosts only, public addresses only,
 * loopback only when the operator allows it, sizes and time capped).
 *
 * Each document is kept as long as its `Cache-Control` allows (`max-age`;
 * `no-store` / `no-cache`: not kept; none: 5 minutes; at most a day).
 * Concurrent logins share one fetch. A token whose `kid` the key set does not
 * have may fetch the set again — at most once per `refetchIntervalMs`, so
 * that tokens with made-up key ids cannot make Tessera hammer the issuer.
 */
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { oidcUrlProblem } from "../domain/definition/project-definition.ts";
import { isPlainObject } from "../domain/model/column-values.ts";
import { createFetchJson, type FetchJsonResponse } from "../sandbox/fetch.ts";
import type { SandboxLogger } from "../sandbox/index.ts";

const DEFAULT_CACHE_MS = 5 * 60_000;
const MAX_CACHE_MS = 24 * 3600_000;

/** An issuer whose keys cannot be had: the login cannot be decided (503), never "wrong password". */
export class IssuerUnavailableError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "IssuerUnavailableError";
  }
}

export interface OidcKeysOptions {
  issuer: string;
  /** Hosts the egress policy lets through besides the issuer's own (`authentication.allowedHosts`). */
  allowedHosts: string[];
  /** The operator's allowance of loopback addresses (SANDBOX_ALLOW_LOOPBACK_FETCH). */
  allowLoopback: boolean;
  /** Names the fetches in the egress policy's log lines. */
  programKey: string;
  logger: SandboxLogger;
  /** Time limit of each fetch. Default 5000 ms. */
  timeoutMs?: number;
  /** Least time between two fetches of the key set for an unknown `kid`. Default 60 s. */
  refetchIntervalMs?: number;
  now?: () => number;
  /** Name resolution for the egress policy (tests). */
  resolve?: (hostname: string) => Promise<{ address: string; family: number }[]>;
}

export interface KeySet {
  getKey: JWTVerifyGetKey;
  /** Fetched for the very call that asked (fetching again could find nothing newer). */
  fresh: boolean;
}

export interface OidcKeys {
  /** The key set: the kept one while it is fresh, else fetched. */
  current(): Promise<KeySet>;
  /**
   * The key set fetched again for an unknown `kid`; when the last such fetch
   * is too recent, the newest set without a fetch (`fresh: false`).
   */
  refetch(): Promise<KeySet>;
}

/** How long a response may be kept, from its `Cache-Control`. */
export function cacheLifetimeMs(cacheControl: string | undefined): number {
  if (cacheControl === undefined) return DEFAULT_CACHE_MS;
  const directives = cacheControl
    .toLowerCase()
    .split(",")
    .map((d) => d.trim());
  if (directives.some((d) => d === "no-store" || d === "no-cache")) return 0;
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)).find((m) => m !== null);
  if (!maxAge) return DEFAULT_CACHE_MS;
  return Math.min(Number(maxAge[1]) * 1000, MAX_CACHE_MS);
}

/** The egress policy's allow-list entry of a URL's host (with its port when it names one). */
function hostEntry(url: string): string {
  const { hostname, port } = new URL(url);
  return port ? `${hostname}:${port}` : hostname;
}

interface Kept<T> {
  value: T;
  expiresAt: number;
}

export function createOidcKeys(options: OidcKeysOptions): OidcKeys {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 5000;
  const refetchIntervalMs = options.refetchIntervalMs ?? 60_000;
  const issuer = options.issuer.replace(/\/$/, "");
  const fetchJson = createFetchJson({
    allowedHosts: [hostEntry(options.issuer), ...options.allowedHosts],
    allowLoopback: options.allowLoopback,
    logger: options.logger,
    defaultTimeoutMs: timeoutMs,
    resolve: options.resolve,
  });

  /** One GET through the egress policy; anything but a 200 with a JSON object is the issuer's fault. */
  async function getJson(url: string, what: string): Promise<Kept<Record<string, unknown>>> {
    const controller = new AbortController();
    let response: FetchJsonResponse;
    try {
      response = (await fetchJson([url], {
        programKey: options.programKey,
        context: undefined,
        signal: controller.signal,
        deadline: now() + timeoutMs,
        callState: new Map(),
      })) as FetchJsonResponse;
    } catch (e) {
      throw new IssuerUnavailableError(`${what}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      controller.abort();
    }
    if (response.status !== 200) throw new IssuerUnavailableError(`${what} answered ${response.status}`);
    if (!isPlainObject(response.body)) throw new IssuerUnavailableError(`${what} is not a JSON object`);
    return { value: response.body, expiresAt: now() + cacheLifetimeMs(response.headers["cache-control"]) };
  }

  /** Keeps one value while it is fresh; concurrent callers of an expired one share its next fetch. */
  function kept<T>(load: () => Promise<Kept<T>>) {
    let value: Kept<T> | undefined;
    let loading: Promise<Kept<T>> | undefined;
    const reload = () => {
      loading ??= load()
        .then((loaded) => {
          value = loaded;
          return loaded;
        })
        .finally(() => {
          loading = undefined;
        });
      return loading;
    };
    return {
      async get(): Promise<{ value: T; fresh: boolean }> {
        if (value && value.expiresAt > now()) return { value: value.value, fresh: false };
        return { value: (await reload()).value, fresh: true };
      },
      async reload(): Promise<T> {
        return (await reload()).value;
      },
      /** The newest value: the one a fetch under way brings, else the kept one (fresh or not), else a fetch. */
      async latest(): Promise<T> {
        return (await (loading ?? (value ? Promise.resolve(value) : reload()))).value;
      },
    };
  }

  const discovery = kept(async () => {
    const doc = await getJson(
      `${issuer}/.well-known/openid-configuration`,
      "The issuer's discovery document",
    );
    const { issuer: named, jwks_uri: jwksUri } = doc.value;
    if (named !== options.issuer && named !== issuer)
      throw new IssuerUnavailableError("The discovery document names another issuer");
    if (typeof jwksUri !== "string" || oidcUrlProblem(jwksUri) !== undefined)
      throw new IssuerUnavailableError("The discovery document's jwks_uri is not an https URL");
    return { value: jwksUri, expiresAt: doc.expiresAt };
  });

  const keySet = kept(async () => {
    const jwksUri = (await discovery.get()).value;
    const doc = await getJson(jwksUri, "The issuer's key set");
    try {
      return { value: createLocalJWKSet(doc.value as unknown as JSONWebKeySet), expiresAt: doc.expiresAt };
    } catch {
      throw new IssuerUnavailableError("The issuer's key set is not a JSON Web Key Set");
    }
  });

  let lastRefetch = Number.NEGATIVE_INFINITY;
  return {
    async current() {
      const { value, fresh } = await keySet.get();
      return { getKey: value, fresh };
    },
    async refetch() {
      // Too soon after the last one: no fetch, but what another login's refetch brought (or is bringing).
      if (now() - lastRefetch < refetchIntervalMs) return { getKey: await keySet.latest(), fresh: false };
      lastRefetch = now();
      return { getKey: await keySet.reload(), fresh: true };
    },
  };
}
