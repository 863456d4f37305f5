/** Every scenario, in the order `make bench` runs them. Add new ones here. */
import type { Scenario } from "../lib/types.ts";
import { dataVsFloor } from "./data-vs-floor.ts";
import { keyValidation } from "./key-validation.ts";
import { customProviderLogin, rulesCascade, sandboxOverhead } from "./logic.ts";
import { login } from "./login.ts";
import { paging } from "./paging.ts";

export const scenarios: Scenario[] = [
  keyValidation,
  dataVsFloor,
  login,
  paging,
  rulesCascade,
  sandboxOverhead,
  customProviderLogin,
];
