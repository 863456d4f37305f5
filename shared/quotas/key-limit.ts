/**
 * The plan's `apiKeysPerProject` as the key store applies it (shared/keys/key-store.ts counts and
 * adds in one step): the account's limit, and the 403/4032 refusal naming it. Read through the plan
 * store's cache, so a login costs no Redis call of its own for it most of the time.
 */
import type { KeyCountLimit } from "../keys/key-store.ts";
import type { PlanStore } from "./plan-store.ts";
import { countRefusal, type LimitName } from "./plans.ts";

/** The limit a new key of the account's projects is held to (undefined: none). */
export type KeyLimitOf = (account: string) => Promise<KeyCountLimit | undefined>;

export function keyLimitOf(
  plans: Pick<PlanStore, "limitsOf">,
  onRefused: (limit: LimitName) => void = () => {},
): KeyLimitOf {
  return async (account) => {
    const { plan, limits } = await plans.limitsOf(account);
    const most = limits.apiKeysPerProject;
    if (most === null) return undefined;
    return {
      most,
      refused: (active) => {
        onRefused("apiKeysPerProject");
        return countRefusal("apiKeysPerProject", most, active, plan);
      },
    };
  };
}
