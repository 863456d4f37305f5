/**
 * A committed write survives a Redis failover only once a replica has the step that completed it
 * (docs/realtime.md#failover): without transactions, the script that released its write intent
 * and appended its events; with transactions, the append. The write's answer waits for that
 * (WRITE_REPLICA_WAIT_MS). A replica that does not acknowledge in time does not hold the answer
 * back: the write is answered, counted and logged — without transactions, only such a write can
 * lose its events (and be undone by recovery) if the primary fails now; with transactions its
 * events stay in the feed outbox until a replica confirms them (transaction-feed.ts). A server that cannot be
 * reached while waiting answers 503: the write's fate is then the failover's.
 */
import { ApiError, ErrorCode } from "../../../../shared/errors.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { ReplicaAcks } from "../../../../shared/redis/replica-acks.ts";

/**
 * Waits until a replica has what this process wrote so far; see the module comment. Resolves to
 * false when none acknowledged in time (the write is answered anyway).
 */
export type WriteReplication = () => Promise<boolean>;

export function writeReplication(
  acks: ReplicaAcks,
  logger: Logger,
  onUnacknowledged: () => void,
): WriteReplication {
  return async () => {
    let acknowledged: boolean;
    try {
      acknowledged = await acks.confirm();
    } catch (err) {
      throw new ApiError(
        503,
        ErrorCode.unavailable,
        "The data store became unavailable as the write completed; whether it stands is not known",
        { cause: err },
      );
    }
    if (!acknowledged) {
      onUnacknowledged();
      logger.warn(
        "a write was answered before a Redis replica acknowledged it: a failover now could lose it",
      );
    }
    return acknowledged;
  };
}
