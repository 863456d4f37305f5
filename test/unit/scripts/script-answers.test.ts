/**
 * What Tessera makes of scripts' answers: request events' verdicts (pass,
 * body, refusal within 400–499 and 4900–4999, anything else refused), answer
 * shapes, and the checksum rule (a checksum only with the href it was given for).
 */
import { expect } from "chai";
import {
  answerProblem,
  collectChecksums,
  requestEventOutcome,
  thrownRefusal,
  unknownChecksum,
} from "../../../services/data/src/scripts/script-answers.ts";

describe("script answers", () => {
  describe("request event outcomes", () => {
    it("nothing passes; {body} replaces a write's body", () => {
      expect(requestEventOutcome(undefined, false, "#1")).to.deep.equal({ kind: "pass" });
      expect(requestEventOutcome(null, true, "#1")).to.deep.equal({ kind: "pass" });
      expect(requestEventOutcome({ body: [{ a: 1 }] }, true, "#1")).to.deep.equal({
        kind: "body",
        body: [{ a: 1 }],
      });
      expect(requestEventOutcome({ body: null }, true, "#1")).to.deep.equal({ kind: "body", body: null });
    });

    it("a refusal keeps its status, code and message, with defaults for the last two", () => {
      expect(
        requestEventOutcome(
          { reject: { statusCode: 422, errorCode: 4922, errorMessage: "Too big" } },
          true,
          "'guard'",
        ),
      ).to.deep.equal({ kind: "refuse", statusCode: 422, errorCode: 4922, errorMessage: "Too big" });
      expect(requestEventOutcome({ reject: { statusCode: 400 } }, false, "'guard'")).to.deep.equal({
        kind: "refuse",
        statusCode: 400,
        errorCode: 4900,
        errorMessage: "Refused by the request event 'guard'",
      });
      expect(requestEventOutcome({ reject: { statusCode: 499, errorCode: 4999 } }, false, "#2")).to.include({
        kind: "refuse",
        statusCode: 499,
        errorCode: 4999,
      });
    });

    it("refuses statuses outside 400–499 and codes outside 4900–4999", () => {
      for (const statusCode of [200, 399, 500, 503, 400.5, "403", null]) {
        const outcome = requestEventOutcome({ reject: { statusCode } }, false, "#1");
        expect(outcome.kind, String(statusCode)).to.equal("invalid");
      }
      for (const errorCode of [4001, 4031, 4899, 5000, 5001, "4901", 4900.5]) {
        const outcome = requestEventOutcome({ reject: { statusCode: 400, errorCode } }, false, "#1");
        expect(outcome.kind, String(errorCode)).to.equal("invalid");
      }
      expect(
        requestEventOutcome({ reject: { statusCode: 400, errorMessage: "x".repeat(1001) } }, false, "#1")
          .kind,
      ).to.equal("invalid");
    });

    it("anything else is invalid, saying why", () => {
      const problem = (value: unknown, hasBody = false) => {
        const outcome = requestEventOutcome(value, hasBody, "#1");
        return outcome.kind === "invalid" ? outcome.problem : outcome.kind;
      };
      expect(problem(true)).to.equal("answered a boolean; expected nothing, {reject} or {body}");
      expect(problem([1])).to.equal("answered an array; expected nothing, {reject} or {body}");
      expect(problem({ refuse: {} })).to.equal(
        "answered an object with 'refuse'; expected nothing, {reject} or {body}",
      );
      expect(problem({ reject: { statusCode: 400 }, body: {} }, true)).to.equal(
        "answered both 'reject' and 'body'",
      );
      expect(problem({ body: {} })).to.equal("answered a body, but only a POST or PUT has one");
      expect(problem({ reject: "no" })).to.equal("answered 'reject' as a string");
      expect(problem({ reject: { statusCode: 400, message: "m" } })).to.equal(
        "answered 'reject' with 'message'; it takes statusCode, errorCode and errorMessage",
      );
    });
  });

  it("answers must be arrays or objects", () => {
    expect(answerProblem([])).to.equal(undefined);
    expect(answerProblem({})).to.equal(undefined);
    expect(answerProblem(null)).to.equal("answered null; expected an array or an object");
    expect(answerProblem(42)).to.equal("answered a number; expected an array or an object");
    expect(answerProblem("x")).to.equal("answered a string; expected an array or an object");
  });

  describe("a request event that threw", () => {
    it("refuses with 400/4900 and the thrown message", () => {
      expect(thrownRefusal("Orders need approval", "'guard'")).to.deep.equal({
        kind: "refuse",
        statusCode: 400,
        errorCode: 4900,
        errorMessage: "Orders need approval",
      });
    });

    it("without a message, refuses with the default message; a long one is cut to 1000 characters", () => {
      expect(thrownRefusal("  ", "#2").errorMessage).to.equal("Refused by the request event #2");
      expect(thrownRefusal("x".repeat(1200), "#2").errorMessage).to.have.length(1000);
    });
  });

  describe("checksums", () => {
    const row = (name: string, checksum: string) => ({
      "@metadata": { href: `http://h/rest/a/p/v1/customer/${name}`, checksum },
      name,
    });
    const given = [
      row("A", "R:1"),
      { ...row("B", "R:2"), orders: [{ "@metadata": { href: "http://h/o/1", checksum: "R:3" } }] },
      { "@metadata": { next_batch: "http://h/next" } },
    ];
    const known = collectChecksums(given, new Map());

    it("collects every href with its checksum, at any depth", () => {
      expect([...known]).to.deep.equal([
        ["http://h/rest/a/p/v1/customer/B", "R:2"],
        ["http://h/o/1", "R:3"],
        ["http://h/rest/a/p/v1/customer/A", "R:1"],
      ]);
    });

    it("accepts checksums kept with their href, dropped, or objects without metadata", () => {
      expect(unknownChecksum(given, known)).to.equal(undefined);
      expect(unknownChecksum({ wrapped: { rows: [given[1]] } }, known)).to.equal(undefined);
      expect(unknownChecksum([{ name: "A" }, { "@metadata": { href: "http://h/x" } }], known)).to.equal(
        undefined,
      );
    });

    it("refuses a forged, moved or orphaned checksum", () => {
      expect(unknownChecksum([row("A", "override")], known)).to.equal(
        "answered a @metadata.checksum that is not the one Tessera gave for http://h/rest/a/p/v1/customer/A",
      );
      expect(unknownChecksum([row("A", "R:2")], known)).to.match(/not the one Tessera gave/);
      expect(unknownChecksum([row("C", "R:1")], known)).to.match(/not the one Tessera gave/);
      expect(unknownChecksum({ a: [{ "@metadata": { checksum: "R:1" } }] }, known)).to.equal(
        "answered a @metadata.checksum without its @metadata.href",
      );
    });

    it("walks deep answers without recursion", () => {
      let deep: unknown = row("A", "forged");
      for (let i = 0; i < 100_000; i++) deep = [deep];
      expect(unknownChecksum(deep, known)).to.match(/not the one Tessera gave/);
    });
  });
});
