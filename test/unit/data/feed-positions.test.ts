/** Change-feed positions and entries (pure parts of feed/feed-hub.ts and store/change-feed.ts). */
import { expect } from "chai";
import { compareIds, parseStreamId } from "../../../services/data/src/feed/feed-hub.ts";
import { parseFeedEntry } from "../../../services/data/src/store/change-feed.ts";

describe("change-feed positions", () => {
  it("orders stream ids by time, then by sequence, beyond the range of a double", () => {
    expect(compareIds("1700000000000-2", "1700000000000-10")).to.equal(-1);
    expect(compareIds("1700000000001-0", "1700000000000-99")).to.equal(1);
    expect(compareIds("5-5", "5-5")).to.equal(0);
    expect(compareIds("18446744073709551615-1", "18446744073709551615-0")).to.equal(1);
    expect(compareIds("0-0", "1-0")).to.equal(-1);
    expect(compareIds("007-1", "7-01")).to.equal(0);
  });

  it("orders any two ids as their numbers do", () => {
    const big = (id: string) => id.split("-").map((x) => BigInt(x));
    const digits = () => String(Math.floor(Math.random() * 10 ** (1 + Math.floor(Math.random() * 15))));
    const ids = Array.from({ length: 200 }, () => `${digits()}-${digits()}`);
    ids.push("0-0", "1-0", "1-1", "18446744073709551615-18446744073709551615");
    for (const a of ids)
      for (const b of ids.slice(0, 40)) {
        const [am, as] = big(a);
        const [bm, bs] = big(b);
        const expected = am! !== bm! ? (am! < bm! ? -1 : 1) : as! === bs! ? 0 : as! < bs! ? -1 : 1;
        expect(compareIds(a, b), `${a} vs ${b}`).to.equal(expected);
        expect(compareIds(b, a), `${b} vs ${a}`).to.equal(-expected);
      }
  });

  it("takes a Last-Event-ID only in the stream's id form", () => {
    expect(parseStreamId("1700000000000-3")).to.equal("1700000000000-3");
    for (const text of [undefined, "", "0", "1-", "-1", "1-2-3", "$", "+", "1700000000000-3\n", "a-1"])
      expect(parseStreamId(text), String(text)).to.equal(null);
  });

  it("reads an entry back, and refuses entries that are not feed events", () => {
    const event = parseFeedEntry("1-0", [
      "tx",
      "t",
      "table",
      "customer",
      "verb",
      "DELETE",
      "key",
      '[1,"a"]',
      "oldRow",
      '{"_id":"[1,\\"a\\"]","_ck":"c","n":{"$numberDecimal":"1.5"}}',
      "oldChecksum",
      "c",
    ]);
    expect(event).to.deep.include({
      id: "1-0",
      tx: "t",
      table: "customer",
      verb: "DELETE",
      key: [1, "a"],
      row: null,
    });
    expect(event!.oldRow!._ck).to.equal("c");
    expect(event!.rules).to.deep.equal([]);
    expect(parseFeedEntry("1-1", ["tx", "t", "table", "customer", "verb", "toString", "key", "1"])).to.equal(
      null,
    );
    expect(parseFeedEntry("1-2", ["table", "customer", "verb", "INSERT", "key", "1"])).to.equal(null);
  });
});
