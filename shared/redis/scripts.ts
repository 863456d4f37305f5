/**
 * Lua scripts as ioredis commands (`defineCommand`): sent by EVALSHA, the text only when the
 * server does not know it yet, and on a Cluster routed to the node owning the script's keys
 * (which must all share one hash slot: shared/redis/key-layout.ts).
 */
import type { RedisClient } from "./clients.ts";

export type Script = (numberOfKeys: number, ...args: (string | number)[]) => Promise<unknown>;

/** `name` must be unique per script text across the codebase (it names the command on the client). */
export function defineScript(client: RedisClient, name: string, lua: string): Script {
  const command = `tessera_${name}`;
  const commands = client as unknown as Record<string, Script>;
  if (!commands[command]) client.defineCommand(command, { lua });
  return (...args) => commands[command]!.apply(client, args);
}
