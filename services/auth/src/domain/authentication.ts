/**
 * The @authentication resource (spec §4.5, DESIGN.md §4.3): login through the
 * project's provider (a new key every time), revalidation and disable of a key
 * (provider not called), password change on login.
 */
import { GENERIC_LOGIN_FAILURE } from "../../../../shared/contracts/internal-api.ts";
import { errors } from "../../../../shared/errors.ts";
import { generateKey, generateKeyId, hashKey } from "../../../../shared/keys/key-format.ts";
import { type KeyRecord, keyState } from "../../../../shared/keys/key-record.ts";
import type { KeyStore } from "../../../../shared/keys/key-store.ts";
import type { Logger } from "../../../../shared/logger.ts";
import { formatExpiration } from "../../../../shared/time.ts";
import type { DataServiceClient } from "../clients/data-service-client.ts";
import type { LoginThrottle } from "../store/login-throttle.ts";

export interface AuthenticationDeps {
  keys: KeyStore;
  data: DataServiceClient;
  throttle: LoginThrottle;
  logger: Logger;
  now: () => number;
  onLogin?: (outcome: "success" | "failure" | "throttled") => void;
}

export interface AuthenticationRequest {
  account: string;
  project: string;
  version: string;
  body: unknown;
  enablePasswordChange: boolean;
  clientAddress: string;
  requestId: string;
}

export async function handleAuthentication(
  deps: AuthenticationDeps,
  req: AuthenticationRequest,
): Promise<Record<string, unknown>> {
  const body = req.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw errors.malformed(
      "The body must be a JSON object: credentials, or 'apikey' to revalidate or disable a key",
    );
  }
  const fields = body as Record<string, unknown>;
  const isLogin = "username" in fields || "password" in fields || !("apikey" in fields);
  if (isLogin) return login(deps, req, fields);
  if (typeof fields.apikey !== "string") throw errors.malformed("'apikey' must be a string");
  const key = fields.apikey.split(":")[0]!;
  if (fields.disable !== undefined && typeof fields.disable !== "boolean") {
    throw errors.malformed("'disable' must be true or false");
  }
  return fields.disable === true ? disable(deps, req, key) : revalidate(deps, req, key);
}

function checkScope(record: KeyRecord, req: AuthenticationRequest): void {
  if (record.account !== req.account || record.project !== req.project) throw errors.wrongScope();
}

async function revalidate(deps: AuthenticationDeps, req: AuthenticationRequest, key: string) {
  const record = await deps.keys.get(hashKey(key));
  if (!record) throw errors.unknownKey();
  checkScope(record, req);
  const state = keyState(record, deps.now());
  if (state === "expired") throw errors.keyExpired();
  if (state === "disabled") throw errors.keyDisabled();
  return {
    apikey: key,
    expiration: record.expiresAt === null ? null : formatExpiration(record.expiresAt),
    userIdentifier: record.userIdentifier,
    roles: record.roles,
  };
}

async function disable(deps: AuthenticationDeps, req: AuthenticationRequest, key: string) {
  const hash = hashKey(key);
  const record = await deps.keys.get(hash);
  if (!record) throw errors.keyNotFound();
  checkScope(record, req);
  if (!(await deps.keys.disable(hash))) throw errors.keyNotFound();
  return { apikey: key, disabled: true };
}

async function login(deps: AuthenticationDeps, req: AuthenticationRequest, payload: Record<string, unknown>) {
  const username = typeof payload.username === "string" ? payload.username : "";
  const now = deps.now();
  const wait = await deps.throttle.retryAfter(req.account, req.project, username, req.clientAddress, now);
  if (wait > 0) {
    deps.onLogin?.("throttled");
    throw errors.tooManyAttempts(wait);
  }
  const answer = await deps.data.authenticate(
    req.account,
    req.project,
    { version: req.version, payload, enablePasswordChange: req.enablePasswordChange },
    req.requestId,
  );
  if (!answer)
    throw errors.notFound(
      `No project '${req.project}' with version '${req.version}' in account '${req.account}'`,
    );
  const { project, verdict } = answer;
  if (!verdict.ok) {
    await deps.throttle.recordFailure(req.account, req.project, username, req.clientAddress, now);
    deps.onLogin?.("failure");
    throw errors.loginFailed(verdict.message === GENERIC_LOGIN_FAILURE ? undefined : verdict.message);
  }
  await deps.throttle.recordSuccess(req.account, req.project, username);
  const apikey = generateKey();
  const expiresAt =
    verdict.keyExpiration ?? now + (verdict.keyLifetimeSeconds ?? project.keyLifetimeSeconds) * 1000;
  const record: KeyRecord = {
    id: generateKeyId(),
    kind: "generated",
    account: req.account,
    project: req.project,
    projectUid: project.uid,
    name: `Temp key for ${req.project} [${verdict.userIdentifier}]`,
    userIdentifier: verdict.userIdentifier,
    roles: verdict.roles,
    globals: verdict.globals,
    createdAt: now,
    expiresAt,
    status: "active",
  };
  await deps.keys.create(hashKey(apikey), record, now);
  deps.onLogin?.("success");
  const response: Record<string, unknown> = {
    apikey,
    expiration: formatExpiration(expiresAt),
    userIdentifier: verdict.userIdentifier,
    roles: verdict.roles,
  };
  if (verdict.userInfo !== undefined) response.userInfo = verdict.userInfo;
  if (req.enablePasswordChange) {
    response.changePasswordResult = verdict.changePasswordResult ?? "notSupported";
    response.changePasswordMessage =
      verdict.changePasswordMessage ?? "The authentication provider does not support password change";
  }
  return response;
}
