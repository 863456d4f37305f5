/**
 * Failed login verdicts of the internal API (shared/contracts/internal-api.ts): the typed
 * reason, how the data service sends it, and the compatibility path that reads the release
 * before typed reasons (`{ok: false, message}`, its standard text meaning "refused").
 */
import { expect } from "chai";
import { z } from "zod";
import {
  adminLoginResponseSchema,
  authenticateResponseSchema,
  type ProjectSettings,
  type VerdictFailure,
  verdictOnTheWire,
} from "../../../shared/contracts/internal-api.ts";
import { errors } from "../../../shared/errors.ts";

const project: ProjectSettings = {
  account: "acme",
  name: "demo",
  uid: "u1",
  revision: 1,
  versions: ["v1"],
  roles: [],
  provider: "custom",
  keyLifetimeSeconds: 3600,
};
const STANDARD_TEXT = errors.loginFailed().message;

/** The failed verdict the auth service reads from an answer of `…/authenticate` and of `…/admin-login`. */
function parsed(verdict: unknown): unknown[] {
  return [
    authenticateResponseSchema.parse({ project, verdict }).verdict,
    adminLoginResponseSchema.parse({ verdict }).verdict,
  ];
}

function outOfContract(verdict: unknown): boolean {
  return (
    !authenticateResponseSchema.safeParse({ project, verdict }).success &&
    !adminLoginResponseSchema.safeParse({ verdict }).success
  );
}

describe("failed login verdicts (internal API)", () => {
  it("a typed reason is read as it is", () => {
    for (const r of parsed({ ok: false, reason: "refused" })) {
      expect(r).to.deep.equal({ ok: false, reason: "refused" });
    }
    for (const r of parsed({ ok: false, reason: "refused", message: STANDARD_TEXT })) {
      expect(r).to.deep.equal({ ok: false, reason: "refused" });
    }
    for (const r of parsed({ ok: false, reason: "providerMessage", message: "Account locked" })) {
      expect(r).to.deep.equal({ ok: false, reason: "providerMessage", message: "Account locked" });
    }
  });

  it("compatibility: the previous release's {ok: false, message} — the standard text is refused, any other the provider's message", () => {
    for (const r of parsed({ ok: false, message: STANDARD_TEXT })) {
      expect(r).to.deep.equal({ ok: false, reason: "refused" });
    }
    for (const r of parsed({ ok: false, message: "Sorry, that is not the secret word" })) {
      expect(r).to.deep.equal({
        ok: false,
        reason: "providerMessage",
        message: "Sorry, that is not the secret word",
      });
    }
  });

  it("out of contract: no reason and no message, a reason it does not know, a provider's message without its text", () => {
    for (const verdict of [
      { ok: false },
      { ok: false, reason: "providerMessage" },
      { ok: false, reason: "locked", message: "x" },
      { ok: false, reason: "refused", message: 3 },
      { ok: false, message: null },
    ]) {
      expect(outOfContract(verdict), JSON.stringify(verdict)).to.equal(true);
    }
  });

  describe("on the wire", () => {
    const refused: VerdictFailure = { ok: false, reason: "refused" };
    const shown: VerdictFailure = { ok: false, reason: "providerMessage", message: "Account locked" };

    it("a refused verdict also carries the standard text; the others go as they are", () => {
      expect(verdictOnTheWire(refused)).to.deep.equal({
        ok: false,
        reason: "refused",
        message: STANDARD_TEXT,
      });
      expect(verdictOnTheWire(shown)).to.deep.equal(shown);
      const success = { ok: true as const, userIdentifier: "ann", roles: [], globals: {} };
      expect(verdictOnTheWire(success)).to.equal(success);
    });

    it("reads back as the same verdict", () => {
      for (const verdict of [refused, shown]) {
        for (const r of parsed(verdictOnTheWire(verdict))) expect(r).to.deep.equal(verdict);
      }
    });

    it("the previous release's auth service answers the client as this one does", () => {
      // What that release parsed a failure with, and how it chose the client's message.
      const previousSchema = z.object({ ok: z.literal(false), message: z.string() });
      const previousAnswer = (message: string) =>
        errors.loginFailed(message === STANDARD_TEXT ? undefined : message).message;
      expect(previousAnswer(previousSchema.parse(verdictOnTheWire(refused)).message)).to.equal(STANDARD_TEXT);
      expect(previousAnswer(previousSchema.parse(verdictOnTheWire(shown)).message)).to.equal(
        errors.loginFailed("Account locked").message,
      );
    });
  });
});
