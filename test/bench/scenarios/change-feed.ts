/**
 * What the change feed costs a plain insert: POST one row through a data
 * service with the feed on (the default: the write intent's release also
 * appends the row's event to the project's stream) against the same POST
 * through a second data service of the same deployment with FEED_ENABLED=false.
 * Both write the same table of the same project, slice by slice.
 */
import { adminClient, keyHeader, projectClient } from "../../support/http.ts";
import { ACCOUNT, expectStatus, oneTableProject } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;
const PROJECT = "feed";

const feedProject = oneTableProject("entry");

export const changeFeed: Scenario = {
  id: "change-feed",
  title: "The change feed's cost on a plain insert",
  describe:
    "POST one row with the change feed on (its event appended by the intent's release) against the same " +
    "POST through a second data service with FEED_ENABLED=false; goal: the feed costs at most 15 % " +
    "(req/s ratio >= 0.87).",
  async run(ctx) {
    const { stack } = ctx;
    const admin = adminClient(stack.baseUrl, stack.adminToken);
    expectStatus(await admin.putProject(ACCOUNT, PROJECT, feedProject), 201, "PUT feed project");
    const created = await admin.createKey(ACCOUNT, PROJECT, { name: "bench", roles: ["Full access"] });
    expectStatus(created, 201, "POST apikeys (feed project)");
    const key = created.body.apikey as string;
    const feedOff = await stack.startServer(
      "data service, feed off",
      "services/data/src/main.ts",
      { ...stack.dataEnv, FEED_ENABLED: "false" },
      ["--no-node-snapshot"],
    );
    const root = projectClient(stack.dataUrl, ACCOUNT, PROJECT).root;
    let written = 0;
    const post = (baseUrl: string) => ({
      url: `${baseUrl}${root}/entry`,
      method: "POST" as const,
      headers: keyHeader(key),
      next: () => {
        const n = ++written;
        return {
          path: `${root}/entry?txsummary=false`,
          body: JSON.stringify({ id: `e${n}`, name: `entry ${n}`, qty: n % 7 }),
        };
      },
    });
    await ctx.measure([
      {
        name: "feed-off",
        what: "POST one row, FEED_ENABLED=false",
        target: post(feedOff.url),
        connections: CONNECTIONS,
      },
      {
        name: "feed-on",
        what: "POST one row, its event appended to the project's change feed",
        target: post(stack.dataUrl),
        connections: CONNECTIONS,
        baseline: "feed-off",
        goal: { op: ">=", value: 0.87 },
      },
    ]);
    ctx.log(`${written} rows posted while measuring`);
  },
};
