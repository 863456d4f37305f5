/** The secret-word sample provider, run through the custom provider runtime. */
import { readFileSync } from "node:fs";
import { expect } from "chai";
import {
  type CustomProviderOptions,
  createCustomProvider,
} from "../../../services/data/src/providers/custom-provider.ts";
import { IsolatePool } from "../../../services/data/src/sandbox/index.ts";
import { ApiError } from "../../../shared/errors.ts";
import { fingerprint } from "../../../shared/loggable-error.ts";
import { memoryLogger } from "./support.ts";

const code = readFileSync(
  new URL("../../../examples/providers/secret-word/secret-word.js", import.meta.url),
  "utf8",
);

describe("sample provider: secret word", () => {
  let pool: IsolatePool;
  let logger: ReturnType<typeof memoryLogger>;

  beforeEach(() => {
    pool = new IsolatePool({ allowLoopbackFetch: false });
    logger = memoryLogger();
  });

  afterEach(async () => {
    await pool.close();
  });

  function options(over: Partial<CustomProviderOptions> = {}): CustomProviderOptions {
    return {
      pool,
      programKey: "acme/demo/auth",
      libraryCode: code,
      libraryName: "secretWord",
      createFunction: "secretWordCreate",
      config: { secretWord: "Open sesame", prompt: "What is the secret word?" },
      projectRoles: ["Full access", "Reader"],
      exposeProviderMessages: false,
      allowedHosts: [],
      logger,
      ...over,
    };
  }

  it("accepts any user name with the secret word", async () => {
    const provider = createCustomProvider(options());
    for (const username of ["alice", "bob"]) {
      const verdict = await provider.authenticate({
        payload: { username, password: "Open sesame" },
        enablePasswordChange: false,
      });
      expect(verdict).to.deep.equal({
        ok: true,
        userIdentifier: username,
        roles: ["Full access"],
        globals: { name: username },
        keyLifetimeSeconds: 3600,
        userInfo: { greeting: `Hello, ${username}` },
      });
    }
  });

  it("refuses a wrong word with the generic message, or the provider's own when exposed", async () => {
    const hidden = createCustomProvider(options());
    expect(
      await hidden.authenticate({
        payload: { username: "alice", password: "open sesame" },
        enablePasswordChange: false,
      }),
    ).to.deep.equal({
      ok: false,
      reason: "refused",
    });
    const shown = createCustomProvider(options({ exposeProviderMessages: true }));
    expect(
      await shown.authenticate({
        payload: { username: "alice", password: "nope" },
        enablePasswordChange: false,
      }),
    ).to.deep.equal({
      ok: false,
      reason: "providerMessage",
      message: "Sorry, that is not the secret word",
    });
    expect(
      await shown.authenticate({ payload: { password: "Open sesame" }, enablePasswordChange: false }),
    ).to.deep.equal({
      ok: false,
      reason: "providerMessage",
      message: "Please tell us your name",
    });
  });

  it("shows the configured prompt in getLoginInfo", async () => {
    const provider = createCustomProvider(
      options({ config: { secretWord: "x", prompt: "Password of the day?" } }),
    );
    const info = await provider.getLoginInfo();
    expect(info.fields.map((f) => [f.name, f.display, f.type])).to.deep.equal([
      ["username", "Your name", "text"],
      ["password", "Password of the day?", "password"],
    ]);
  });

  it("uses configured roles, dropping roles the project does not define", async () => {
    const provider = createCustomProvider(
      options({ config: { secretWord: "w", roles: ["Reader", "Admin"] } }),
    );
    const verdict = await provider.authenticate({
      payload: { username: "a", password: "w" },
      enablePasswordChange: false,
    });
    expect(verdict).to.include({ ok: true });
    expect(verdict.ok && verdict.roles).to.deep.equal(["Reader"]);
    expect(logger.text()).to.contain("Admin");
  });

  it("answers notSupported to a password change and still logs in", async () => {
    const provider = createCustomProvider(options());
    const verdict = await provider.authenticate({
      payload: { username: "a", password: "Open sesame", newPassword: "better" },
      enablePasswordChange: true,
    });
    expect(verdict).to.include({ ok: true, changePasswordResult: "notSupported" });
  });

  it("picks up a new config (new program), and a config without a word fails cleanly", async () => {
    const first = createCustomProvider(options());
    expect(
      await first.authenticate({
        payload: { username: "a", password: "Open sesame" },
        enablePasswordChange: false,
      }),
    ).to.include({ ok: true });
    const second = createCustomProvider(options({ config: { secretWord: "Changed" } }));
    expect(second.program).to.not.equal(first.program);
    expect(
      await second.authenticate({
        payload: { username: "a", password: "Open sesame" },
        enablePasswordChange: false,
      }),
    ).to.include({ ok: false });
    expect(
      await second.authenticate({
        payload: { username: "a", password: "Changed" },
        enablePasswordChange: false,
      }),
    ).to.include({ ok: true });

    const broken = createCustomProvider(options({ config: {} }));
    expect(
      await broken.authenticate({ payload: { username: "a", password: "" }, enablePasswordChange: false }),
    ).to.deep.equal({
      ok: false,
      reason: "refused",
    });
    // What configure threw, as a fingerprint (provider text can quote what it was given).
    expect(logger.text()).to.contain(
      `"fingerprint":"${fingerprint("Error: secretWord: a non-empty string is required")}"`,
    );
    try {
      await broken.getLoginInfo();
      expect.fail("getLoginInfo should fail");
    } catch (e) {
      expect(e).to.be.instanceOf(ApiError);
      expect((e as ApiError).statusCode).to.equal(503);
    }
  });

  it("never logs the password", async () => {
    const provider = createCustomProvider(options({ config: { secretWord: "w", roles: ["Ghost"] } }));
    await provider.authenticate({
      payload: { username: "a", password: "Hunter2-secret" },
      enablePasswordChange: false,
    });
    await provider.authenticate({ payload: { username: "a", password: "w" }, enablePasswordChange: false });
    expect(logger.text()).to.not.contain("Hunter2-secret");
  });
});
