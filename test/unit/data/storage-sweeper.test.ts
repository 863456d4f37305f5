/**
 * The deleted-storage sweeper's passes (store/storage-sweeper.ts), with stand-ins for the two
 * stores: a caller that records a deletion and asks for a sweep gets a pass that saw it, even
 * while a pass that listed the deletions before is still under way.
 */
import { expect } from "chai";
import type { DeletedStorageDoc, MetaStore } from "../../../services/data/src/store/meta-store.ts";
import { DeletedStorageSweeper } from "../../../services/data/src/store/storage-sweeper.ts";
import type { TenantStore } from "../../../services/data/src/store/tenant-store.ts";
import type { Logger } from "../../../shared/logger.ts";

const silent = { warn() {}, info() {}, error() {}, debug() {} } as unknown as Logger;

function deletion(database: string): DeletedStorageDoc {
  return { _id: database, database, account: database, deletedAt: new Date() } as DeletedStorageDoc;
}

describe("deleted-storage sweeper", () => {
  it("answers a sweep asked for during a pass with a pass that begins after it, one for all who ask", async () => {
    const recorded: DeletedStorageDoc[] = [deletion("tn_first")];
    const dropped: string[] = [];
    let lists = 0;
    let release: (() => void) | undefined;
    const firstListing = new Promise<void>((resolve) => {
      release = resolve;
    });
    const meta = {
      async listDeletedStorage() {
        lists++;
        const seen = [...recorded];
        if (lists === 1) await firstListing;
        return seen;
      },
      async storageInUse() {
        return false;
      },
      async forgetDeletedStorage() {},
    } as unknown as MetaStore;
    const tenants = {
      async dropAccountStorage(database: string) {
        dropped.push(database);
      },
    } as unknown as TenantStore;
    const sweeper = new DeletedStorageSweeper({ meta, tenants, logger: silent });

    const first = sweeper.sweep();
    // A deletion recorded while the first pass holds a listing from before it.
    recorded.push(deletion("tn_second"));
    const [second, third] = [sweeper.sweep(), sweeper.sweep()];
    expect(second).to.equal(third);
    release?.();
    await Promise.all([first, second]);
    expect(dropped).to.deep.equal(["tn_first", "tn_first", "tn_second"]);
    expect(lists, "one pass after the first, for both callers").to.equal(2);
    await sweeper.sweep();
    expect(lists, "nothing under way: a pass of its own").to.equal(3);
  });
});
