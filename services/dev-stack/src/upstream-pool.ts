/**
 * The replicas of one service behind the local gateway, taken in turn (round robin). A replica
 * is left out while it is down: for a moment after it refused a connection, or until its
 * supervisor says it is back (stack.ts restarts a replica that died).
 */
export class UpstreamPool {
  readonly #members: { url: URL; downUntil: number }[];
  #turn = 0;
  readonly #now: () => number;

  constructor(urls: string[], now: () => number = Date.now) {
    if (urls.length === 0) throw new Error("an upstream pool needs at least one member");
    this.#members = urls.map((u) => ({ url: new URL(u), downUntil: 0 }));
    this.#now = now;
  }

  get size(): number {
    return this.#members.length;
  }

  /** The next member that is up, skipping `except`; when none is, the next one anyway (it may be back). */
  pick(except: ReadonlySet<string> = new Set()): URL | undefined {
    const now = this.#now();
    const candidates = this.#members.filter((m) => !except.has(m.url.href));
    if (candidates.length === 0) return undefined;
    const up = candidates.filter((m) => m.downUntil <= now);
    const from = up.length > 0 ? up : candidates;
    return from[this.#turn++ % from.length]!.url;
  }

  /** Leaves `url` out for `forMs` (Infinity: until `up`). */
  down(url: string | URL, forMs = 1000): void {
    const member = this.#find(url);
    if (member) member.downUntil = this.#now() + forMs;
  }

  up(url: string | URL): void {
    const member = this.#find(url);
    if (member) member.downUntil = 0;
  }

  #find(url: string | URL) {
    const href = new URL(url).href;
    return this.#members.find((m) => m.url.href === href);
  }
}
