/**
 * Lua scripts as ioredis commands (`defineCommand`): sent by EVALSHA, the text only when the
 * server does not know it yet, and on a Cluster routed to the node owning the script's keys
 * (which must all share one hash slot: shared/redis/key-layout.ts).
 */

import { present } from "../present.ts";
import type { RedisClient } from "./clients.ts";

export type Script = (numberOfKeys: number, ...args: (string | number)[]) => Promise<unknown>;

/** `name` must be unique per script text across the codebase (it names the command on the client). */
export function defineScript(client: RedisClient, name: string, lua: string): Script {
  const command = `tessera_${name}`;
  const commands = client as unknown as Record<string, Script>;
  if (!commands[command]) client.defineCommand(command, { lua });
  return (...args) => present(commands[command], `the command of script ${name}`).apply(client, args);
}

/** The keys and arguments of a script by name, in the order its Lua reads them as KEYS and ARGV. */
export interface ScriptShape<K extends string, A extends string> {
  keys: readonly K[];
  args: readonly A[];
}

/** A script called with one object: its keys by name, its arguments by name. */
export type NamedScript<K extends string, A extends string> = (
  call: Record<K, string> & Record<A, string | number>,
) => Promise<unknown>;

/**
 * `defineScript` called with named keys and arguments: `shape` lists them in the order the Lua
 * reads them (KEYS[1]… then ARGV[1]…), the one place where names become positions.
 */
export function defineNamedScript<K extends string, A extends string>(
  client: RedisClient,
  name: string,
  lua: string,
  shape: ScriptShape<K, A>,
): NamedScript<K, A> {
  const script = defineScript(client, name, lua);
  return (call) =>
    script(shape.keys.length, ...shape.keys.map((k) => call[k]), ...shape.args.map((a) => call[a]));
}
