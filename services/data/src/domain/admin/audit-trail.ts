/**
 * The data service's end of the audit trail: admin changes it served itself and
 * those the auth service reports through the internal API are stored with the
 * incarnation of their account (the handler's, else the current one; none when
 * the account does not exist). Whatever looks like a generated key's value in
 * its path or summary is redacted first: an entry is read by every reader of the
 * account, for good.
 */
import type { AuditReport, AuditSink } from "../../../../../shared/admin-access/audit.ts";
import { redactKeys } from "../../../../../shared/key-format.ts";
import type { AuditStore } from "../../store/audit-store.ts";
import type { MetaStore } from "../../store/meta-store.ts";

export function createAuditTrail(meta: MetaStore, audit: AuditStore): AuditSink {
  return {
    async append(report: AuditReport) {
      const { account, accountUid, ...entry } = report;
      let uid = accountUid ?? null;
      if (uid === null && account !== undefined) {
        const doc = await meta.getAccount(account);
        uid = doc ? meta.accountUid(doc) : null;
      }
      await audit.append({
        ...entry,
        path: redactKeys(entry.path),
        summary: redactKeys(entry.summary),
        account: account ?? null,
        accountUid: uid,
      });
    },
  };
}
