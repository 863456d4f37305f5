import { z } from "zod";

/** What is stored for every API key, generated or manual (never the key itself). */
export type KeyKind = "generated" | "manual";
export type KeyStatus = "active" | "disabled";

/** An account administrator's role: `admin` may change everything in the account, `reader` only read. */
export const ADMIN_ROLES = ["admin", "reader"] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

/**
 * What an account administrator's key stands for (admin keys only). The key is
 * honoured only while the administrator still exists in that incarnation of the
 * account with the same credential stamp (a new password revokes older keys); the
 * role in force is the administrator's current one.
 */
export interface AdminGrant {
  login: string;
  /** The role at login (informational: each request checks the current one). */
  role: AdminRole;
  /** Incarnation of the account the key was minted for. */
  accountUid: string;
  /** The administrator's credential stamp at login. */
  credentialStamp: string;
}

export interface KeyRecord {
  id: string;
  kind: KeyKind;
  account: string;
  project: string;
  /** Incarnation id of the project the key was minted for (a re-created project does not honour it). */
  projectUid: string;
  /** Label shown in key lists: `Temp key for <project> [<user>]` for generated keys. */
  name: string;
  description?: string;
  userIdentifier: string | null;
  roles: string[];
  globals: Record<string, unknown>;
  createdAt: number;
  /** Epoch ms; null = never expires (manual keys only). */
  expiresAt: number | null;
  status: KeyStatus;
  /** Set on account administrators' keys, which belong to no project (`project` and `projectUid` are empty). */
  admin?: AdminGrant;
}

export type KeyState = "active" | "disabled" | "expired";

export function keyState(record: KeyRecord, now: number): KeyState {
  if (record.status === "disabled") return "disabled";
  if (record.expiresAt !== null && record.expiresAt <= now) return "expired";
  return "active";
}

/**
 * A key record's fixed part as the key store keeps it (everything but its status), read through
 * this schema: every release so far stored these fields (`description` and `admin` only when
 * set); fields it does not name are kept.
 */
export const storedKeyFields = z.looseObject({
  id: z.string(),
  kind: z.enum(["generated", "manual"]),
  account: z.string(),
  project: z.string(),
  projectUid: z.string(),
  name: z.string(),
  description: z.string().optional(),
  userIdentifier: z.string().nullable(),
  roles: z.array(z.string()),
  globals: z.record(z.string(), z.unknown()),
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
  admin: z
    .looseObject({
      login: z.string(),
      role: z.enum(ADMIN_ROLES),
      accountUid: z.string(),
      credentialStamp: z.string(),
    })
    .optional(),
});
