/** What is stored for every API key, generated or manual (never the key itself). */
export type KeyKind = "generated" | "manual";
export type KeyStatus = "active" | "disabled";

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
}

export type KeyState = "active" | "disabled" | "expired";

export function keyState(record: KeyRecord, now: number): KeyState {
  if (record.status === "disabled") return "disabled";
  if (record.expiresAt !== null && record.expiresAt <= now) return "expired";
  return "active";
}
