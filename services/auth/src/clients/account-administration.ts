/**
 * The data service's account administration as the auth service uses it: the
 * administrators for the admin gate, and the audit trail for the changes the
 * auth service makes (keys, an administrator's own password).
 */
import type { AuditReport, AuditSink } from "../../../../shared/admin-access/audit.ts";
import type { AdminDirectory } from "../../../../shared/admin-access/caller.ts";
import type { DataServiceClient } from "./data-service-client.ts";

export function adminDirectoryOf(data: DataServiceClient): AdminDirectory {
  return {
    async find(account, login, requestId) {
      const admin = await data.admin(account, login, requestId);
      return admin
        ? { accountUid: admin.accountUid, role: admin.role, credentialStamp: admin.credentialStamp }
        : null;
    },
  };
}

export function auditReporterOf(data: DataServiceClient): AuditSink {
  return {
    async append(report: AuditReport) {
      const { account, accountUid: _known, ...body } = report;
      // Every route of the auth service that changes something lies within an account.
      if (account !== undefined) await data.reportAudit(account, body);
    },
  };
}
