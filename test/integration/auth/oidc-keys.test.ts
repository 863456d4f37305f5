/**
 * The `oidc` provider's fetches of its issuer's keys, against a real issuer
 * process on loopback. Egress: it reaches the issuer only through the sandbox's
 * egress policy, as custom providers do: against a real issuer process on loopback,
 * without the operator's loopback allowance nothing is fetched and the login
 * cannot be decided (503/5031, not a failed login); an issuer name that
 * resolves to a private address is refused whatever the allowance. Rotation:
 * logins that arrive together with a token of a newly published key share one
 * fetch of the key set, and all succeed.
 */
import { expect } from "chai";
import { createOidcKeys } from "../../../services/data/src/providers/oidc-keys.ts";
import { createOidcProvider } from "../../../services/data/src/providers/oidc-provider.ts";
import { ApiError } from "../../../shared/errors.ts";
import { type OidcIssuer, startOidcIssuer } from "../../support/oidc-issuer.ts";
import { memoryLogger } from "../../unit/sandbox/support.ts";

describe("oidc issuer keys", () => {
  let issuer: OidcIssuer;
  before(async () => {
    issuer = await startOidcIssuer();
  });
  after(() => issuer?.stop());

  function provider(
    allowLoopback: boolean,
    url = issuer.url,
    resolve?: (host: string) => Promise<{ address: string; family: number }[]>,
  ) {
    const logger = memoryLogger();
    const settings = {
      issuer: url,
      audience: "aud",
      algorithms: ["RS256" as const],
      userIdentifierClaim: "sub",
      clockSkewSeconds: 0,
    };
    const keys = createOidcKeys({
      issuer: url,
      allowedHosts: [],
      allowLoopback,
      resolve,
    });
    return createOidcProvider({
      settings,
      keys,
      projectRoles: new Set(),
      keyLifetimeSeconds: 60,
      programKey: "a/p/oidc",
      logger,
    });
  }

  async function refusal(p: ReturnType<typeof provider>, token: string): Promise<ApiError> {
    try {
      await p.authenticate({ payload: { id_token: token }, enablePasswordChange: false });
    } catch (e) {
      if (e instanceof ApiError) return e;
      throw e;
    }
    throw new Error("expected the login to be undecidable");
  }

  it("without the operator's loopback allowance the issuer is never reached: 503/5031", async () => {
    const before = await issuer.stats();
    const token = await issuer.sign({ sub: "alice", aud: "aud", exp: Math.floor(Date.now() / 1000) + 60 });
    const err = await refusal(provider(false), token);
    expect([err.statusCode, err.errorCode]).to.deep.equal([503, 5031]);
    expect(await issuer.stats()).to.deep.equal(before);
  });

  it("with it, the same login is verified", async () => {
    const token = await issuer.sign({ sub: "alice", aud: "aud", exp: Math.floor(Date.now() / 1000) + 60 });
    const verdict = await provider(true).authenticate({
      payload: { id_token: token },
      enablePasswordChange: false,
    });
    expect(verdict).to.include({ ok: true, userIdentifier: "alice" });
  });

  it("an issuer name that resolves to a private address is refused even with the loopback allowance", async () => {
    const before = await issuer.stats();
    const token = await issuer.sign({ sub: "alice", aud: "aud", exp: Math.floor(Date.now() / 1000) + 60 });
    const named = issuer.url.replace("127.0.0.1", "localhost");
    const err = await refusal(
      provider(true, named, async () => [{ address: "10.0.0.7", family: 4 }]),
      token,
    );
    expect([err.statusCode, err.errorCode]).to.deep.equal([503, 5031]);
    expect(await issuer.stats()).to.deep.equal(before);
  });
  it("logins that arrive together after a key rotation share one fetch and all succeed (50 rounds)", async () => {
    const exp = () => Math.floor(Date.now() / 1000) + 60;
    for (let round = 0; round < 50; round++) {
      const p = provider(true);
      const login = async () =>
        p.authenticate({
          payload: { id_token: await issuer.sign({ sub: `u${round}`, aud: "aud", exp: exp() }) },
          enablePasswordChange: false,
        });
      expect(await login()).to.include({ ok: true });
      await issuer.rotate();
      const before = (await issuer.stats()).jwks;
      const verdicts = await Promise.all(Array.from({ length: 6 }, login));
      expect(
        verdicts.map((v) => v.ok),
        `round ${round}`,
      ).to.deep.equal(Array(6).fill(true));
      expect((await issuer.stats()).jwks - before, `round ${round}`).to.equal(1);
    }
  });
});
