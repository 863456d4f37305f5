/**
 * Every Redis key Tessera writes, built here. On a Redis Cluster a script, MULTI or pipeline
 * may only touch keys of one hash slot, so each key carries a hash tag (`{…}`: only that part
 * decides the slot) naming what its multi-key operations have in common:
 *  - a key record: its own hash (`key:{<hash>}`); the per-project index of keys and its expiry
 *    order are keys of their own, with one tag (`{<account>/<project>}`: one script trims both);
 *  - the login throttle: one tag per subject and one per address and hour (two scripts, one each);
 *  - row locks, write intents and their lease index: the tenant database (`{<database>}`), so
 *    locking every row of a request and recording its intent is one script in one slot;
 *  - request rate limits: the account (`{<account>}`): its own limits, its bucket and its keys'
 *    buckets, so that one script takes a request's tokens.
 *  - a project's change feed (a stream): the tenant database too, so the script that completes a
 *    write intent appends the write's events in the same step; so does the mark that a committed
 *    transaction's events were appended (one script sets it and appends);
 *  - a project's webhook subscriptions, their circuits and each one's delivery state (retries,
 *    dead letters, log, replays): the tenant database as well, so one script moves an event between the feed's
 *    consumer group and a subscription's retry state.
 * `prefix` is REDIS_PREFIX (no braces: it is validated at start-up).
 */

export function keyRecordKey(prefix: string, hash: string): string {
  return `${prefix}key:{${hash}}`;
}

export function keyIndexKey(prefix: string, account: string, project: string): string {
  return `${prefix}keyidx:{${account}/${project}}`;
}

/** Sorted set beside the project's index (same hash tag): each key id by when its record leaves Redis. */
export function keyIndexExpiryKey(prefix: string, account: string, project: string): string {
  return `${prefix}keyexp:{${account}/${project}}`;
}

/**
 * Sorted set beside the project's index (same hash tag): each key id that counts against the plan's
 * `apiKeysPerProject` (neither disabled nor deleted) by when it expires (ms; +inf: never).
 */
export function keyActiveKey(prefix: string, account: string, project: string): string {
  return `${prefix}keyact:{${account}/${project}}`;
}

/** `throttle` names one kind of credential check, e.g. `tessera:throttle:login:`. */
export function throttleSubjectKey(throttle: string, subjectHash: string): string {
  return `${throttle}s:{${subjectHash}}`;
}

export function throttleAddressKey(throttle: string, address: string, hour: number): string {
  return `${throttle}a:{${address}:${hour}}`;
}

export function rowLockKey(prefix: string, database: string, collection: string, rowId: string): string {
  return `${prefix}rowlock:{${database}}/${collection}/${rowId}`;
}

/** The key of intent `id` is this followed by the id. */
export function intentKeyPrefix(prefix: string, database: string): string {
  return `${prefix}intent:{${database}}:`;
}

/** Sorted set of the database's intents by lease expiry. */
export function intentIndexKey(prefix: string, database: string): string {
  return `${prefix}intents:{${database}}`;
}

/** Sorted set of the databases that had intents lately (where recovery looks), by when a writer last said so. */
export function intentDatabasesKey(prefix: string): string {
  return `${prefix}intent-databases`;
}

/** A project's change feed (Redis Stream): `collectionPrefix` names the project's incarnation. */
export function feedStreamKey(prefix: string, database: string, collectionPrefix: string): string {
  return `${prefix}feed:{${database}}:${collectionPrefix}`;
}

/**
 * Set, in the feed's slot, once the events of transaction `tx` (committed in MongoDB, kept in the
 * feed outbox) were appended: whoever appends them again — the sweeper after a crash — finds it.
 */
export function feedAppendedKey(prefix: string, database: string, tx: string): string {
  return `${prefix}feed-tx:{${database}}:${tx}`;
}

/** A project incarnation's webhook subscriptions (hash: subscription id → record), beside its feed. */
export function webhookSubscriptionsKey(prefix: string, database: string, collectionPrefix: string): string {
  return `${prefix}hooks:{${database}}:${collectionPrefix}`;
}

/** What a subscription's delivery keeps (`part`: `retry`, `state`, `dead`, `log`, `replay`), in its feed's slot. */
export function webhookStateKey(
  prefix: string,
  database: string,
  collectionPrefix: string,
  subscription: string,
  part: "retry" | "state" | "dead" | "log" | "replay",
): string {
  return `${prefix}hook-${part}:{${database}}:${collectionPrefix}:${subscription}`;
}

/** A project incarnation's webhook circuits (hash: subscription id → circuit; a closed one has none), beside its feed. */
export function webhookCircuitsKey(prefix: string, database: string, collectionPrefix: string): string {
  return `${prefix}hook-circuits:{${database}}:${collectionPrefix}`;
}

/** Hash of the project incarnations that have webhook subscriptions (where each process looks for work). */
export function webhookProjectsKey(prefix: string): string {
  return `${prefix}hook-projects`;
}

/** The scratch key a data-service process writes before it waits for a replica (replica-acks.ts). */
export function replicaAckKey(prefix: string): string {
  return `${prefix}replica-ack`;
}

/** Generated-key sequences of one tenant database (single-key commands only). */
export function sequenceKey(prefix: string, database: string): string {
  return `${prefix}seq:${database}`;
}

/** An account's own request rate limits (hash: `account`, `key`), set by the operator. */
export function rateLimitPolicyKey(prefix: string, account: string): string {
  return `${prefix}rate:{${account}}:policy`;
}

/** A token bucket of the account: `account`, or `key:<key id>` for one of its keys. */
export function rateLimitBucketKey(prefix: string, account: string, bucket: string): string {
  return `${prefix}rate:{${account}}:${bucket}`;
}

/** The audit trail's last sequence number known to be stored (a starting point for writers, not the truth). */
export function auditHeadKey(prefix: string): string {
  return `${prefix}audit-head`;
}

export function leaseKey(prefix: string, name: string): string {
  return `${prefix}lease:${name}`;
}

/** Pub/sub channel of project-definition changes (on a Cluster, PUBLISH reaches every node's subscribers). */
export function projectChangedChannel(prefix: string): string {
  return `${prefix}project-changed`;
}

/** Names of a key record and a key index before keys carried hash tags (read and renamed outside Cluster mode). */
export function legacyKeyRecordKey(prefix: string, hash: string): string {
  return `${prefix}key:${hash}`;
}

export function legacyKeyIndexKey(prefix: string, account: string, project: string): string {
  return `${prefix}keyidx:${account}/${project}`;
}

/**
 * How to find every key under the old names (one SCAN pattern covering both kinds; a name is a
 * record or an index by how it starts, else neither), and each one's new name.
 */
export const legacyKeyPatterns = (prefix: string) => ({
  match: `${prefix}key*`,
  record: {
    start: `${prefix}key:`,
    rename: (name: string) => keyRecordKey(prefix, name.slice(`${prefix}key:`.length)),
  },
  index: {
    start: `${prefix}keyidx:`,
    rename: (name: string) => `${prefix}keyidx:{${name.slice(`${prefix}keyidx:`.length)}}`,
  },
});

/** Plans defined through the admin API (hash: plan name → its limits as JSON). */
export function plansKey(prefix: string): string {
  return `${prefix}plans`;
}

/** An account's plan and its own overrides (hash: `plan`, `overrides`), beside its rate limits. */
export function accountPlanKey(prefix: string, account: string): string {
  return `${prefix}rate:{${account}}:plan`;
}

/**
 * Rows per collection of one tenant database (hash: collection → rows committed and reserved by
 * writes in flight), in the database's slot: the script that locks a write's rows checks and
 * reserves them in the same step (store/write-intents.ts).
 */
export function rowCountsKey(prefix: string, database: string): string {
  return `${prefix}rowcount:{${database}}`;
}

/**
 * An account's usage series at one resolution (`m`: minute buckets of one hour, `h`: hour buckets
 * of one day; `period` names the hour or day), hash: `<bucket>|<metric>` → value.
 */
export function usageSeriesKey(
  prefix: string,
  account: string,
  resolution: "m" | "h",
  period: string,
): string {
  return `${prefix}usage:{${account}}:${resolution}:${period}`;
}

/** An account's last store measurement (hash: `at`, `bytes`, `tables` as JSON). */
export function usageSnapshotKey(prefix: string, account: string): string {
  return `${prefix}usage:{${account}}:now`;
}

/** Who samples the store's statistics this round (one process at a time). */
export function usageSamplerKey(prefix: string): string {
  return `${prefix}usage-sampler`;
}

/**
 * The storage rounds' keys, all in one slot (`{usage-rounds}`): `changed` (set of the accounts
 * written since a round took them), `taken` (those the current or an unfinished round took),
 * `sweep` (the account the rounds' sweep of unchanged accounts goes on after), `bytes` (hash:
 * account → stored bytes as last measured), `states` (hash: account → its `limit|state` pairs at
 * 80 % / 100 % of its plan), `counts` (hash: `limit|state` → accounts), `total` (bytes of all).
 */
export function usageRoundsKey(
  prefix: string,
  part: "changed" | "taken" | "sweep" | "bytes" | "states" | "counts" | "total",
): string {
  return `${prefix}{usage-rounds}:${part}`;
}
