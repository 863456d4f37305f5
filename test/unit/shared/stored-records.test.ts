/**
 * Stored state is parsed, not believed (shared/stored-json.ts): each record the services read back
 * from Redis or MongoDB goes through its schema, and the shapes earlier releases stored still read.
 */

import { expect } from "chai";
import { BSON } from "mongodb";
import { CLOSED, parseCircuit } from "../../../services/data/src/hooks/circuit.ts";
import { parseFeedEntry } from "../../../services/data/src/store/change-feed.ts";
import { decodeIntent, encodeIntent } from "../../../services/data/src/store/write-intents.ts";
import { usageSnapshotRecord } from "../../../services/data/src/usage/usage-series.ts";
import { storedKeyFields } from "../../../shared/keys/key-record.ts";
import { readStoredJson } from "../../../shared/stored-json.ts";

describe("stored records", () => {
  it("a key record as the first release stored it (no description, no admin grant) reads", () => {
    const first = {
      id: "k1",
      kind: "manual",
      account: "acme",
      project: "shop",
      projectUid: "u1",
      name: "ci key",
      userIdentifier: null,
      roles: ["Full access"],
      globals: {},
      createdAt: 1,
      expiresAt: null,
    };
    expect(readStoredJson(storedKeyFields, "key record", JSON.stringify(first))).to.deep.equal(first);
    const admin = { login: "ann", role: "reader", accountUid: "a1", credentialStamp: "s" };
    const later = { ...first, project: "", projectUid: "", admin, future: true };
    expect(readStoredJson(storedKeyFields, "key record", JSON.stringify(later))).to.deep.equal(later);
    expect(() =>
      readStoredJson(storedKeyFields, "key record", JSON.stringify({ ...first, roles: "Full access" })),
    ).to.throw(/^a stored key record does not read: roles/);
  });

  it("a webhook circuit stored without the fields later releases added reads with the closed circuit's", () => {
    expect(parseCircuit('{"state":"open","timeouts":3,"until":5000}')).to.deep.equal({
      ...CLOSED,
      state: "open",
      timeouts: 3,
      until: 5000,
    });
    expect(parseCircuit("")).to.equal(CLOSED);
    expect(() => parseCircuit('{"state":"ajar"}')).to.throw(/webhook circuit does not read: state/);
  });

  it("a feed entry stored before events named their rules reads with none; a key that is no row id does not", () => {
    const flat = ["tx", "t1", "table", "customer", "verb", "INSERT", "key", '"Alpha"'];
    const row = BSON.EJSON.stringify({ _id: "Alpha", _ck: "c", since: new Date(0) }, { relaxed: true });
    const event = parseFeedEntry("1-0", [...flat, "row", row]);
    expect(event?.rules).to.deep.equal([]);
    expect(event?.key).to.equal("Alpha");
    expect(event?.row?.since).to.be.instanceOf(Date);
    expect(() => parseFeedEntry("1-1", [...flat.slice(0, 6), "key", '{"a":1}'])).to.throw(/feed event's key/);
  });

  it("a write intent keeps its rows' BSON values; one that is not an intent is refused", () => {
    const body = {
      database: "t_acme",
      writes: [
        { kind: "insert" as const, collection: "shop_item", after: { _id: 1, _ck: "c", at: new Date(5) } },
        { kind: "delete" as const, collection: "shop_item", before: { _id: 2, _ck: "d" } },
      ],
    };
    expect(decodeIntent(encodeIntent(body))).to.deep.equal(body);
    expect(() => decodeIntent('{"database":"t","writes":[{"kind":"insert","collection":"c"}]}')).to.throw(
      /^not a write intent: writes.0.after/,
    );
  });

  it("a usage snapshot reads; one of another shape does not", () => {
    const snapshot = {
      at: 1,
      storedBytes: 10,
      rows: 2,
      projects: { shop: { item: { rows: 2, bytes: 10 } } },
    };
    expect(readStoredJson(usageSnapshotRecord, "usage snapshot", JSON.stringify(snapshot))).to.deep.equal(
      snapshot,
    );
    expect(() => readStoredJson(usageSnapshotRecord, "usage snapshot", '{"at":1}')).to.throw(
      /usage snapshot does not read/,
    );
  });
});
