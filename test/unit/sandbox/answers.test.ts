/** The one answer format across the isolate boundary: every encoder and decoder agrees on it. */
import { expect } from "chai";
import {
  answerParts,
  errorAnswer,
  UNDEFINED_ANSWER,
  valueAnswer,
} from "../../../services/data/src/sandbox/answers.ts";
import { SandboxHostError } from "../../../services/data/src/sandbox/errors.ts";
import { hostAnswerValue, hostValueAnswer } from "../../../services/data/src/sandbox/host-answers.ts";
import { decodeAnswer } from "../../../services/data/src/sandbox/requests.ts";

describe("sandbox answers", () => {
  it("spells undefined one way, in both directions", () => {
    expect(valueAnswer(undefined)).to.equal(UNDEFINED_ANSWER);
    expect(hostValueAnswer("f", undefined, 100)).to.equal(UNDEFINED_ANSWER);
    expect(hostValueAnswer("f", () => 1, 100)).to.equal(UNDEFINED_ANSWER);
    expect(hostAnswerValue(UNDEFINED_ANSWER)).to.equal(undefined);
    expect(decodeAnswer(UNDEFINED_ANSWER, 100, "k")).to.equal(undefined);
  });

  it("carries values as JSON text", () => {
    const answer = hostValueAnswer("f", { a: [1, "x", null] }, 100);
    expect(answerParts(answer)).to.deep.equal({ kind: "value", json: '{"a":[1,"x",null]}' });
    expect(hostAnswerValue(answer)).to.deep.equal({ a: [1, "x", null] });
    expect(decodeAnswer(answer, 100, "k")).to.deep.equal({ a: [1, "x", null] });
  });

  it("carries errors, and refuses an answer in no known form", () => {
    expect(() => hostAnswerValue(errorAnswer({ message: "nope" })))
      .to.throw(SandboxHostError)
      .with.property("message", "nope");
    expect(() => decodeAnswer(errorAnswer({ name: "TypeError", message: "x" }), 100, "k")).to.throw(
      "TypeError: x",
    );
    expect(answerParts("U")).to.deep.equal({ kind: "unreadable" });
    expect(() => decodeAnswer("U", 100, "k")).to.throw("unreadable answer");
  });
});
