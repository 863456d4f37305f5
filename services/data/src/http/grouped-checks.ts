/**
 * Periodic checks shared by the members of a group (docs/realtime.md): however many live streams
 * one key holds in this process, its key is checked once per interval, and every stream of that key
 * hears the outcome. A group's timer runs while it has members; a check still running when the next
 * interval comes is not started again (the members hear its outcome when it settles).
 */

export interface CheckMember<T> {
  /** Runs the group's check; the first member's runs for all of them (they check the same thing). */
  check: () => Promise<T>;
  /** Hears each outcome of the group's check. */
  onResult: (result: PromiseSettledResult<T>) => void;
}

interface Group<T> {
  members: Set<CheckMember<T>>;
  timer: NodeJS.Timeout;
  running: boolean;
}

export class GroupedChecks<T> {
  readonly #groups = new Map<string, Group<T>>();
  readonly #intervalMs: number;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** Adds `member` to the group `name` (started on its first member). Returns the leave call. */
  join(name: string, member: CheckMember<T>): () => void {
    let group = this.#groups.get(name);
    if (!group) {
      const created: Group<T> = {
        members: new Set(),
        timer: setInterval(() => this.#tick(created), this.#intervalMs),
        running: false,
      };
      this.#groups.set(name, created);
      group = created;
    }
    const joined = group;
    joined.members.add(member);
    return () => {
      joined.members.delete(member);
      if (joined.members.size > 0 || this.#groups.get(name) !== joined) return;
      clearInterval(joined.timer);
      this.#groups.delete(name);
    };
  }

  /** Groups checked now (for tests). */
  get groups(): number {
    return this.#groups.size;
  }

  #tick(group: Group<T>): void {
    const [first] = group.members;
    if (!first || group.running) return;
    group.running = true;
    const settle = (result: PromiseSettledResult<T>) => {
      group.running = false;
      for (const member of [...group.members]) member.onResult(result);
    };
    first.check().then(
      (value) => settle({ status: "fulfilled", value }),
      (reason: unknown) => settle({ status: "rejected", reason }),
    );
  }
}
