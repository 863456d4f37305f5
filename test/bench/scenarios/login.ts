/**
 * Issue: logins per second with argon2id at OWASP's minimum (m=19 MiB, t=2,
 * p=1: the production default ARGON2_MEMORY_KIB=19456) on this machine.
 * Baseline: the floor server's bare argon2id verification over HTTP, so the
 * ratio is the share of the hash in a whole login (edge, auth service,
 * internal call to the data service, user lookup, key record written to Redis).
 */
import { rotatingLogins } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;

export const login: Scenario = {
  id: "login",
  title: "Logins per second (argon2id m=19 MiB, t=2, p=1)",
  describe:
    "POST @authentication with built-in users' credentials (rotating over 20 users) through the edge (a new key each time) " +
    "against the floor server's bare argon2id verification with the same parameters.",
  async run(ctx) {
    const { stack, fixtures } = ctx;
    const floor = await ctx.floor();
    await ctx.measure([
      {
        name: "floor-argon2",
        what: "floor: argon2id verify only (19456 KiB, t=2, p=1)",
        target: {
          url: `${floor.url}/floor/argon2`,
          method: "POST",
          body: JSON.stringify({ password: "floor-password" }),
        },
        connections: CONNECTIONS,
      },
      {
        name: "login",
        what: "login through the edge: built-in provider, new key in Redis",
        target: {
          url: `${stack.baseUrl}${fixtures.root}/@authentication`,
          method: "POST",
          next: rotatingLogins(),
        },
        connections: CONNECTIONS,
        baseline: "floor-argon2",
      },
    ]);
  },
};
