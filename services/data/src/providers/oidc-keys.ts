/**
 * The published keys of an OpenID Connect issuer, for the `oidc` provider:
 * its discovery document (`<issuer>/.well-known/openid-configuration`) names
 * the key set (`jwks_uri`); both are fetched through the data service's one
 * outbound path (egress/http-request.ts: the issuer's host and the project's
 * allowed hosts only, public addresses only, loopback only when the operator
 * allows it, sizes and time capped).
 *
 * The key set is jose's remote key set (`createRemoteJWKSet`, given that path as
 * its fetch): it fetches, shares one fetch among concurrent logins, and picks
 * the key of a token. Kept here, because jose's options cannot say them:
 * - each document is kept as long as its `Cache-Control` allows (`max-age`;
 *   `no-store` / `no-cache`: not kept; none: 5 minutes; at most a day), where
 *   jose keeps a key set for one fixed time;
 * - a token whose `kid` the key set does not have fetches the set again at
 *   most once per `refetchIntervalMs` counted from the last such fetch, so that
 *   tokens with made-up key ids cannot make Tessera hammer the issuer while a
 *   key rotated in is found at once (jose counts its cool-down from any fetch,
 *   so a key published within a minute of the set's first fetch would wait);
 * - the discovery document (jose has no discovery).
 */
import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey, errors as joseErrors } from "jose";
import { oidcUrlProblem } from "../domain/definition/project-definition.ts";
import { isPlainObject } from "../domain/model/column-values.ts";
import { EgressError, type Resolver, sendRequest } from "../egress/http-request.ts";

const DEFAULT_CACHE_MS = 5 * 60_000;
const MAX_CACHE_MS = 24 * 3600_000;
/** The most of an issuer's document that is read. */
const MAX_DOCUMENT_BYTES = 1024 * 1024;

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
  /** Time limit of each fetch. Default 5000 ms. */
  timeoutMs?: number;
  /** Least time between two fetches of the key set for an unknown `kid`. Default 60 s. */
  refetchIntervalMs?: number;
  now?: () => number;
  /** Name resolution for the egress policy (tests). */
  resolve?: Resolver;
}

export interface OidcKeys {
  /** The key of a token, for jose's `jwtVerify`: IssuerUnavailableError when the issuer's keys cannot be had. */
  getKey: JWTVerifyGetKey;
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

/** Keeps one value while it is fresh; concurrent callers of an expired one share its next fetch. */
function kept<T>(load: () => Promise<Kept<T>>, now: () => number) {
  let value: Kept<T> | undefined;
  let loading: Promise<Kept<T>> | undefined;
  return async (): Promise<T> => {
    if (value && value.expiresAt > now()) return value.value;
    loading ??= load()
      .then((loaded) => {
        value = loaded;
        return loaded;
      })
      .finally(() => {
        loading = undefined;
      });
    return (await loading).value;
  };
}

/** jose's JWKS shape: an object whose `keys` is a list of objects. */
function isKeySet(value: unknown): boolean {
  return isPlainObject(value) && Array.isArray(value.keys) && value.keys.every(isPlainObject);
}

export function createOidcKeys(options: OidcKeysOptions): OidcKeys {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 5000;
  const refetchIntervalMs = options.refetchIntervalMs ?? 60_000;
  const issuer = options.issuer.replace(/\/$/, "");
  const policy = {
    allowedHosts: [hostEntry(options.issuer), ...options.allowedHosts],
    allowLoopback: options.allowLoopback,
    resolve: options.resolve,
  };

  /** One GET through the egress path; anything but a 200 with a JSON object is the issuer's fault. */
  async function getJson(
    url: string,
    what: string,
    signal?: AbortSignal,
  ): Promise<Kept<Record<string, unknown>>> {
    let response: Awaited<ReturnType<typeof sendRequest>>;
    try {
      response = await sendRequest(policy, {
        url,
        headers: { accept: "application/json", "user-agent": "Tessera-OIDC/1" },
        timeoutMs,
        maxResponseBytes: MAX_DOCUMENT_BYTES,
        signal,
      });
    } catch (e) {
      if (e instanceof EgressError) throw new IssuerUnavailableError(`${what}: ${e.message}`);
      throw e;
    }
    if (response.status !== 200) throw new IssuerUnavailableError(`${what} answered ${response.status}`);
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString("utf8"));
    } catch {
      throw new IssuerUnavailableError(`${what} is not JSON`);
    }
    if (!isPlainObject(body)) throw new IssuerUnavailableError(`${what} is not a JSON object`);
    return { value: body, expiresAt: now() + cacheLifetimeMs(response.headers["cache-control"]) };
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
  }, now);

  /** jose's remote set of the key set the discovery document names now, and when its Cache-Control lets it expire. */
  let keySet: { uri: string; remote: ReturnType<typeof createRemoteJWKSet>; expiresAt: number } | undefined;
  const keySetAt = (uri: string) => {
    if (keySet?.uri === uri) return keySet;
    const entry = {
      uri,
      expiresAt: Number.NEGATIVE_INFINITY,
      remote: createRemoteJWKSet(new URL(uri), {
        // Kept and fetched again on an unknown kid as this module says, not by jose's own clock.
        cacheMaxAge: Number.POSITIVE_INFINITY,
        cooldownDuration: Number.POSITIVE_INFINITY,
        // Ours ends the fetch first, with its own reason.
        timeoutDuration: timeoutMs + 1000,
        [customFetch]: async (url: string, init: RequestInit) => {
          const doc = await getJson(url, "The issuer's key set", init.signal ?? undefined);
          if (!isKeySet(doc.value))
            throw new IssuerUnavailableError("The issuer's key set is not a JSON Web Key Set");
          entry.expiresAt = doc.expiresAt;
          return Response.json(doc.value);
        },
      }),
    };
    keySet = entry;
    return entry;
  };

  let lastRefetch = Number.NEGATIVE_INFINITY;
  /** A failure of jose's fetch that is not ours (its own time limit): the issuer's keys are not to be had. */
  const unavailable = (e: unknown): never => {
    if (e instanceof joseErrors.JWKSTimeout || e instanceof joseErrors.JWKSInvalid)
      throw new IssuerUnavailableError(`The issuer's key set: ${e.message}`);
    throw e;
  };

  return {
    async getKey(header, token) {
      const { remote, expiresAt } = keySetAt(await discovery());
      // Fetched for this very login: fetching again for an unknown kid could find nothing newer.
      const fetched = expiresAt <= now();
      if (fetched) await remote.reload().catch(unavailable);
      try {
        return await remote(header, token);
      } catch (e) {
        if (!(e instanceof joseErrors.JWKSNoMatchingKey) || fetched) throw e;
        if (remote.reloading) await remote.reload().catch(unavailable);
        else if (now() - lastRefetch >= refetchIntervalMs) {
          lastRefetch = now();
          await remote.reload().catch(unavailable);
        }
        // Else the newest keys as they are: another login's fetch for an unknown kid may have brought this one.
        return await remote(header, token);
      }
    },
  };
}
