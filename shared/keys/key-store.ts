/**
 * Key records in Redis. Layout (prefix = REDIS_PREFIX):
 *   <prefix>key:<sha256 of key>          HASH { d: JSON KeyRecord (immutable part), s: status }
 *   <prefix>keyidx:<account>/<project>   HASH { <id>: <sha256 of key> }   (for admin listings)
 * Validation is a single HGETALL. Records live until expiry + retention (Redis TTL),
 * so revalidation and disable of an expired key answer as the contract says.
 */
import type { Redis } from "ioredis";
import type { KeyRecord, KeyStatus } from "./key-record.ts";

const DISABLE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 's', 'disabled')
return 1`;

export class KeyStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #retentionSeconds: number;

  constructor(redis: Redis, prefix: string, retentionSeconds: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#retentionSeconds = retentionSeconds;
  }

  #recordKey(hash: string): string {
    return `${this.#prefix}key:${hash}`;
  }

  #indexKey(account: string, project: string): string {
    return `${this.#prefix}keyidx:${account}/${project}`;
  }

  /** Stores a new record; false when a key with this hash already exists (nothing changed). */
  async create(hash: string, record: KeyRecord, now: number): Promise<boolean> {
    const { status, ...fixed } = record;
    const recordKey = this.#recordKey(hash);
    const ttlMs = record.expiresAt === null ? null : record.expiresAt - now + this.#retentionSeconds * 1000;
    const created = await this.#redis.hsetnx(recordKey, "d", JSON.stringify(fixed));
    if (!created) return false;
    const tx = this.#redis.multi().hset(recordKey, "s", status);
    if (ttlMs !== null) tx.pexpire(recordKey, Math.max(1, ttlMs));
    tx.hset(this.#indexKey(record.account, record.project), record.id, hash);
    await tx.exec();
    return true;
  }

  /** One round trip. */
  async get(hash: string): Promise<KeyRecord | null> {
    const fields = await this.#redis.hgetall(this.#recordKey(hash));
    return decode(fields);
  }

  /** Marks the key disabled; false when it does not exist. */
  async disable(hash: string): Promise<boolean> {
    const done = (await this.#redis.eval(DISABLE_SCRIPT, 1, this.#recordKey(hash))) === 1;
    if (done) await this.#awaitReplicas();
    return done;
  }

  async list(account: string, project: string): Promise<KeyRecord[]> {
    const index = await this.#redis.hgetall(this.#indexKey(account, project));
    const ids = Object.keys(index);
    if (ids.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.#recordKey(index[id]!));
    const results = (await pipeline.exec()) ?? [];
    const records: KeyRecord[] = [];
    const stale: string[] = [];
    results.forEach(([err, fields], i) => {
      const record = err ? null : decode(fields as Record<string, string>);
      if (record) records.push(record);
      else stale.push(ids[i]!);
    });
    if (stale.length > 0) await this.#redis.hdel(this.#indexKey(account, project), ...stale);
    return records.sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Deletes a key by its id; false when the project has no such key. */
  async deleteById(account: string, project: string, id: string): Promise<boolean> {
    const indexKey = this.#indexKey(account, project);
    const hash = await this.#redis.hget(indexKey, id);
    if (!hash) return false;
    const [[, deleted]] = (await this.#redis
      .multi()
      .del(this.#recordKey(hash))
      .hdel(indexKey, id)
      .exec()) as [[unknown, number], [unknown, number]];
    await this.#awaitReplicas();
    return deleted === 1;
  }

  /** Removes every key of a project (when the project is deleted). */
  async deleteProject(account: string, project: string): Promise<void> {
    const indexKey = this.#indexKey(account, project);
    const hashes = Object.values(await this.#redis.hgetall(indexKey));
    const tx = this.#redis.multi();
    for (const hash of hashes) tx.del(this.#recordKey(hash));
    await tx.del(indexKey).exec();
    await this.#awaitReplicas();
  }

  /**
   * A revocation acknowledged to a client must survive a failover: when the
   * primary has replicas, wait until at least one has the write.
   */
  async #awaitReplicas(): Promise<void> {
    const role = (await this.#redis.role()) as [string, number, [string, string, string][]?];
    const replicas = role[0] === "master" ? (role[2]?.length ?? 0) : 0;
    if (replicas > 0) await this.#redis.wait(1, 1000);
  }
}

function decode(fields: Record<string, string> | null | undefined): KeyRecord | null {
  if (!fields?.d) return null;
  const fixed = JSON.parse(fields.d) as Omit<KeyRecord, "status">;
  return { ...fixed, status: (fields.s === "disabled" ? "disabled" : "active") as KeyStatus };
}
