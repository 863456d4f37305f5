/** Mocha root hooks: stop the stores this test process started. */
import { stopTestStores } from "./stores.ts";

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(15_000);
    await stopTestStores();
  },
};
