/** Every scenario, in the order `make bench` runs them. Add new ones here. */
import type { Scenario } from "../lib/types.ts";
import { catastrophicIsolates } from "./catastrophic-isolates.ts";
import { changeFeed } from "./change-feed.ts";
import { dataVsFloor } from "./data-vs-floor.ts";
import { fairShare } from "./fair-share.ts";
import { feedFanout } from "./feed-fanout.ts";
import { growth } from "./growth.ts";
import { insertGrowth } from "./insert-growth.ts";
import { keyValidation } from "./key-validation.ts";
import { customProviderLogin, rulesCascade, rulesGrandparent, sandboxOverhead } from "./logic.ts";
import { login } from "./login.ts";
import { nested } from "./nested.ts";
import { paging } from "./paging.ts";
import { parseInsert } from "./parse-insert.ts";
import { parseReadLogin } from "./parse-read-login.ts";
import { quotas } from "./quotas.ts";
import { responseFormats } from "./response-formats.ts";
import { scripts } from "./scripts.ts";
import { tenants } from "./tenants.ts";
import { webhookIsolation } from "./webhook-isolation.ts";
import { webhooks } from "./webhooks.ts";

export const scenarios: Scenario[] = [
  keyValidation,
  dataVsFloor,
  login,
  insertGrowth,
  parseInsert,
  parseReadLogin,
  paging,
  nested,
  rulesCascade,
  sandboxOverhead,
  rulesGrandparent,
  customProviderLogin,
  responseFormats,
  scripts,
  fairShare,
  changeFeed,
  quotas,
  webhooks,
  webhookIsolation,
  feedFanout,
  growth,
  catastrophicIsolates,
  tenants,
];
