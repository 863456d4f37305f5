/**
 * The @authentication resource of a project: login through the project's
 * provider (a new key every time; each attempt reserved with the throttle
 * before the provider sees it), revalidation and disable of a key (provider not
 * called), password change on login.
 */
import type { AuthenticateResponse, VerdictFailure } from "../../../../shared/contracts/internal-api.ts";
import { errors } from "../../../../shared/errors.ts";
import { generateKeyId } from "../../../../shared/key-format.ts";
import type { KeyRecord } from "../../../../shared/keys/key-record.ts";
import type { KeyLimitOf } from "../../../../shared/quotas/key-limit.ts";
import type { DataServiceClient } from "../clients/data-service-client.ts";
import type { AttemptThrottle } from "../store/attempt-throttle.ts";
import {
  type AuthenticationDepsBase,
  type AuthenticationRequestBase,
  disableKey,
  mintKey,
  readAuthenticationBody,
  revalidateKey,
  throttledVerdict,
} from "./authentication-actions.ts";
import type { ProjectIdentityFields } from "./identity-fields-cache.ts";
import { loginIdentity } from "./login-identity.ts";

export interface AuthenticationDeps extends AuthenticationDepsBase {
  data: DataServiceClient;
  /** The plan's apiKeysPerProject of the account (absent: none). */
  keyLimit?: KeyLimitOf;
  throttle: AttemptThrottle;
  identityFields: ProjectIdentityFields;
}

export interface AuthenticationRequest extends AuthenticationRequestBase {
  project: string;
  version: string;
}

export async function handleAuthentication(
  deps: AuthenticationDeps,
  req: AuthenticationRequest,
): Promise<Record<string, unknown>> {
  const action = readAuthenticationBody(req.body);
  // Only this project's keys: another project's, or an account administrator's, is 401/4012.
  const checkScope = (record: KeyRecord) => {
    if (record.admin || record.account !== req.account || record.project !== req.project)
      throw errors.wrongScope();
  };
  switch (action.kind) {
    case "login":
      return login(deps, req, action.payload);
    case "revalidate":
      return revalidateKey(deps.keys, deps.now(), action.key, checkScope, (record) =>
        requireIncarnation(deps, req, record),
      );
    case "disable":
      return disableKey(deps.keys, action.key, checkScope);
  }
}

/** 401/4011 unless the key was minted for the project as it is now (not for one deleted since). */
async function requireIncarnation(deps: AuthenticationDeps, req: AuthenticationRequest, record: KeyRecord) {
  const settings = await deps.data.settings(req.account, req.project, req.requestId);
  if (settings?.uid !== record.projectUid) throw errors.unknownKey();
}

/** What a login's attempt is counted against: the project and the identity its provider reads. */
async function attemptScope(
  deps: AuthenticationDeps,
  req: AuthenticationRequest,
  payload: Record<string, unknown>,
) {
  const identity = await deps.identityFields.get(req.account, req.project, req.requestId);
  if (!identity) throw errors.notFound(`No project '${req.project}' in account '${req.account}'`);
  return {
    subject: `${req.account}/${req.project}/${loginIdentity(payload, identity.fields)}`,
    address: req.clientAddress,
  };
}

async function login(deps: AuthenticationDeps, req: AuthenticationRequest, payload: Record<string, unknown>) {
  const answer = await throttledVerdict<AuthenticateResponse>(
    deps.throttle,
    await attemptScope(deps, req, payload),
    () =>
      deps.data.authenticate(
        req.account,
        req.project,
        { version: req.version, payload, enablePasswordChange: req.enablePasswordChange },
        req.requestId,
      ),
    (a) => a.verdict.ok,
    deps.onLogin,
  );
  if (!answer) {
    throw errors.notFound(
      `No project '${req.project}' with version '${req.version}' in account '${req.account}'`,
    );
  }
  const { project, verdict } = answer;
  deps.identityFields.observe(project);
  if (!verdict.ok) throw loginFailure(verdict);
  const now = deps.now();
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
    expiresAt:
      verdict.keyExpiration ?? now + (verdict.keyLifetimeSeconds ?? project.keyLifetimeSeconds) * 1000,
    status: "active",
  };
  // A login mints a key: refused (403/4032) when the project has as many keys in force as its plan allows.
  const response = await mintKey(deps.keys, record, now, await deps.keyLimit?.(req.account));
  deps.onLogin?.("success");
  if (verdict.userInfo !== undefined) response.userInfo = verdict.userInfo;
  if (req.enablePasswordChange) {
    response.changePasswordResult = verdict.changePasswordResult ?? "notSupported";
    response.changePasswordMessage =
      verdict.changePasswordMessage ?? "The authentication provider does not support password change";
  }
  return response;
}

/** The client's answer to a failed login: the standard 401/4015, in the provider's own words when it gave them. */
function loginFailure(verdict: VerdictFailure) {
  switch (verdict.reason) {
    case "refused":
      return errors.loginFailed();
    case "providerMessage":
      return errors.loginFailed(verdict.message);
  }
}
