/**
 * An account administrator's @authentication (`/admin/v1/accounts/{a}/@authentication`),
 * on the contract of a project's: a login with `username`/`password` gets a new
 * admin key every time; `{apikey}` revalidates, `{apikey, disable: true}`
 * disables; `?enablePasswordChange!` with `newPassword` changes the password
 * (which revokes the administrator's other keys). The data service gives the
 * verdict; attempts are reserved with the administrators' own throttle first,
 * per account and login. Every failure has the one generic body, also for an
 * account that does not exist.
 */
import { type AuditSink, appendAudit } from "../../../../shared/admin-access/audit.ts";
import { type AdminDirectory, currentStanding } from "../../../../shared/admin-access/caller.ts";
import type { AdminLoginResponse, AdminVerdictSuccess } from "../../../../shared/contracts/internal-api.ts";
import { errors } from "../../../../shared/errors.ts";
import { generateKeyId } from "../../../../shared/key-format.ts";
import type { KeyRecord } from "../../../../shared/keys/key-record.ts";
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
import { loginIdentity } from "./login-identity.ts";

export interface AdminAuthenticationDeps extends AuthenticationDepsBase {
  data: DataServiceClient;
  directory: AdminDirectory;
  /** The administrators' throttle (its own Redis prefix, apart from projects' logins). */
  adminThrottle: AttemptThrottle;
  audit: AuditSink;
  adminKeyLifetimeSeconds: number;
}

export interface AdminAuthenticationRequest extends AuthenticationRequestBase {
  /** The request's path, for the audit trail. */
  path: string;
}

export async function handleAdminAuthentication(
  deps: AdminAuthenticationDeps,
  req: AdminAuthenticationRequest,
): Promise<Record<string, unknown>> {
  const action = readAuthenticationBody(req.body);
  // Only administrators' keys of this account: a project's key or another account's is 401/4012.
  const adminOf = (record: KeyRecord) => {
    if (!record.admin || record.account !== req.account) throw errors.wrongScope();
    return record.admin;
  };
  const checkScope = (record: KeyRecord) => {
    adminOf(record);
  };
  // A key whose administrator is gone, has a new password, or whose account was created again: 4011.
  let currentRole: string | undefined;
  const stillValid = async (record: KeyRecord) => {
    currentRole = (await currentStanding(deps.directory, req.account, adminOf(record), req.requestId)).role;
  };
  switch (action.kind) {
    case "login":
      return login(deps, req, action.payload);
    case "revalidate": {
      const answer = await revalidateKey(deps.keys, deps.now(), action.key, checkScope, stillValid);
      // The role in force is the administrator's current one, whatever it was at login.
      return { ...answer, roles: [currentRole] };
    }
    case "disable":
      return disableKey(deps.keys, action.key, checkScope);
  }
}

async function login(
  deps: AdminAuthenticationDeps,
  req: AdminAuthenticationRequest,
  payload: Record<string, unknown>,
) {
  const answer = await throttledVerdict<AdminLoginResponse>(
    deps.adminThrottle,
    { subject: `${req.account}/${loginIdentity(payload, ["username"])}`, address: req.clientAddress },
    () =>
      deps.data.adminLogin(
        req.account,
        { payload, enablePasswordChange: req.enablePasswordChange },
        req.requestId,
      ),
    (a) => a.verdict.ok,
    deps.onLogin,
  );
  if (!answer?.verdict.ok) throw errors.loginFailed();
  const verdict = answer.verdict;
  if (verdict.changePasswordResult === "success") await reportPasswordChange(deps, req, verdict);
  const now = deps.now();
  const record: KeyRecord = {
    id: generateKeyId(),
    kind: "generated",
    account: req.account,
    project: "",
    projectUid: "",
    name: `Admin key for ${req.account} [${verdict.login}]`,
    userIdentifier: verdict.login,
    roles: [verdict.role],
    globals: {},
    createdAt: now,
    expiresAt: now + deps.adminKeyLifetimeSeconds * 1000,
    status: "active",
    admin: {
      login: verdict.login,
      role: verdict.role,
      accountUid: verdict.accountUid,
      credentialStamp: verdict.credentialStamp,
    },
  };
  const response = await mintKey(deps.keys, record, now);
  deps.onLogin?.("success");
  if (req.enablePasswordChange) {
    response.changePasswordResult = verdict.changePasswordResult ?? "failure";
    response.changePasswordMessage = verdict.changePasswordMessage ?? "The password was not changed";
  }
  return response;
}

/** An administrator's new password is an admin change: it goes into the account's audit trail. */
async function reportPasswordChange(
  deps: AdminAuthenticationDeps,
  req: AdminAuthenticationRequest,
  verdict: AdminVerdictSuccess,
): Promise<void> {
  await appendAudit(
    deps.audit,
    {
      account: req.account,
      actor: { kind: "admin", login: verdict.login, role: verdict.role },
      method: "POST",
      path: req.path,
      summary: `admin '${verdict.login}' changed their own password (their other keys are revoked)`,
      status: 200,
      requestId: req.requestId,
    },
    deps.logger,
  );
}
