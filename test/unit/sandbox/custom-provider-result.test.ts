/** Mapping of what a custom provider answers onto provider verdicts. */
import { expect } from "chai";
import {
  expirationMillis,
  GENERIC_LOGIN_FAILURE,
  type MappingContext,
  mapAuthenticateResult,
  mapLoginInfo,
} from "../../../services/data/src/providers/custom-provider-result.ts";

const NOW = Date.parse("2030-01-01T00:00:00.000Z");

function ctx(over: Partial<MappingContext> = {}): MappingContext {
  return {
    projectRoles: new Set(["Full access", "Reader"]),
    exposeProviderMessages: false,
    enablePasswordChange: false,
    payload: { username: "alice", password: "pw" },
    now: NOW,
    ...over,
  };
}

describe("custom provider answers", () => {
  it("maps a full success answer", () => {
    const { verdict, notes, malformed } = mapAuthenticateResult(
      {
        errorMessage: null,
        roleNames: ["Reader", "Ghost", "Reader"],
        userIdentifier: "alice@example.com",
        keyExpiration: "2030-01-01T01:00:00.000Z",
        keyLifetimeSeconds: 120.7,
        userData: { region: "EU" },
        userInfo: { displayName: "Alice" },
        lastLogin: { datetime: "x" },
      },
      ctx(),
    );
    expect(malformed).to.equal(false);
    expect(verdict).to.deep.equal({
      ok: true,
      userIdentifier: "alice@example.com",
      roles: ["Reader"],
      globals: { region: "EU" },
      keyExpiration: NOW + 3600_000,
      keyLifetimeSeconds: 120,
      userInfo: { displayName: "Alice" },
    });
    expect(notes.join()).to.contain("Ghost");
  });

  it("defaults userIdentifier to the login's username and globals to {}", () => {
    const { verdict } = mapAuthenticateResult({ roleNames: [] }, ctx());
    expect(verdict).to.deep.equal({ ok: true, userIdentifier: "alice", roles: [], globals: {} });
  });

  it("reads keyExpiration as an ISO date, epoch milliseconds or epoch seconds", () => {
    expect(expirationMillis("2030-01-01T00:00:00Z")).to.equal(NOW);
    expect(expirationMillis(NOW)).to.equal(NOW);
    expect(expirationMillis(NOW / 1000)).to.equal(NOW);
    expect(expirationMillis("soon")).to.equal(undefined);
    expect(expirationMillis(true)).to.equal(undefined);
  });

  it("summarises errorMessage unless exposeProviderMessages", () => {
    expect(mapAuthenticateResult({ errorMessage: "Account locked" }, ctx()).verdict).to.deep.equal({
      ok: false,
      message: GENERIC_LOGIN_FAILURE,
    });
    expect(
      mapAuthenticateResult({ errorMessage: "Account\nlocked" }, ctx({ exposeProviderMessages: true }))
        .verdict,
    ).to.deep.equal({
      ok: false,
      message: "Account locked",
    });
    expect(
      mapAuthenticateResult({ errorMessage: 42 }, ctx({ exposeProviderMessages: true })).verdict,
    ).to.deep.equal({
      ok: false,
      message: GENERIC_LOGIN_FAILURE,
    });
    expect(mapAuthenticateResult({ errorMessage: "" }, ctx()).verdict.ok).to.equal(false);
  });

  it("treats malformed answers as failed logins", () => {
    const bad: unknown[] = [
      null,
      "yes",
      42,
      [],
      {},
      { roleNames: "Reader" },
      { roleNames: [1] },
      { roleNames: [], userIdentifier: { id: 1 } },
      { roleNames: [], userIdentifier: "" },
      { roleNames: [], keyExpiration: "never" },
      { roleNames: [], keyExpiration: NOW - 1 },
      { roleNames: [], keyExpiration: NOW + 400 * 24 * 3600_000 },
      { roleNames: [], keyLifetimeSeconds: -5 },
      { roleNames: [], keyLifetimeSeconds: "60" },
      { roleNames: [], userData: [1] },
      { roleNames: [], userData: { big: "x".repeat(70_000) } },
      { roleNames: [], userInfo: "hello" },
    ];
    for (const raw of bad) {
      const mapped = mapAuthenticateResult(raw, ctx());
      expect(mapped.verdict, JSON.stringify(raw)?.slice(0, 80)).to.deep.equal({
        ok: false,
        message: GENERIC_LOGIN_FAILURE,
      });
      expect(mapped.malformed).to.equal(true);
    }
    expect(mapAuthenticateResult({ roleNames: [] }, ctx({ payload: {} })).malformed).to.equal(true);
  });

  it("notes every wrong part of a malformed answer, each once", () => {
    const mapped = mapAuthenticateResult(
      { roleNames: "Reader", keyLifetimeSeconds: 0, userData: 5, userInfo: [] },
      ctx(),
    );
    expect(mapped.malformed).to.equal(true);
    expect(mapped.notes).to.deep.equal([
      "roleNames is missing or not an array",
      "keyLifetimeSeconds is not a number of seconds between 1 and 366 days",
      "userData is not an object",
      "userInfo is not an object",
    ]);
  });

  it("reports password change results only when asked for", () => {
    const ok = { roleNames: ["Reader"] };
    expect(
      mapAuthenticateResult({ ...ok, changePasswordResult: "success" }, ctx()).verdict,
    ).to.not.have.property("changePasswordResult");
    const none = mapAuthenticateResult(ok, ctx({ enablePasswordChange: true })).verdict;
    expect(none).to.include({ changePasswordResult: "notSupported" });
    expect(none).to.have.property("changePasswordMessage").that.is.a("string");
    const done = mapAuthenticateResult(
      { ...ok, changePasswordResult: "failure", changePasswordMessage: "too short" },
      ctx({ enablePasswordChange: true }),
    ).verdict;
    expect(done).to.include({ changePasswordResult: "failure", changePasswordMessage: "too short" });
    const odd = mapAuthenticateResult(
      { ...ok, changePasswordResult: "maybe" },
      ctx({ enablePasswordChange: true }),
    );
    expect(odd.verdict).to.include({ ok: true, changePasswordResult: "failure" });
  });

  it("validates getLoginInfo answers", () => {
    const good = mapLoginInfo({
      fields: [
        { name: "username", display: "User", type: "text", length: 40, helpURL: "x" },
        { name: "password" },
      ],
    });
    expect(good).to.deep.equal({
      info: {
        fields: [
          { name: "username", display: "User", type: "text", length: 40 },
          { name: "password", display: "password", type: "text" },
        ],
        links: [],
      },
    });
    expect(mapLoginInfo({ fields: "no" })).to.have.property("problem");
    expect(mapLoginInfo({ fields: [{ display: "x" }] })).to.have.property("problem");
    expect(mapLoginInfo(null)).to.have.property("problem");
  });
});
