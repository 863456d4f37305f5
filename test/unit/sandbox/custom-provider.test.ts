/** The custom provider runtime: create/configure lifecycle, defaults, dates, and how failures surface. */
import { expect } from "chai";
import {
  type CustomProviderOptions,
  createCustomProvider,
} from "../../../services/data/src/providers/custom-provider.ts";
import { IsolatePool } from "../../../services/data/src/sandbox/index.ts";
import { ApiError } from "../../../shared/errors.ts";
import { memoryLogger } from "./support.ts";

describe("custom provider runtime", () => {
  let pool: IsolatePool;
  let logger: ReturnType<typeof memoryLogger>;
  let n = 0;

  beforeEach(() => {
    pool = new IsolatePool({ allowLoopbackFetch: false, timeoutMs: 500 });
    logger = memoryLogger();
  });

  afterEach(async () => {
    await pool.close();
  });

  function options(libraryCode: string, over: Partial<CustomProviderOptions> = {}): CustomProviderOptions {
    return {
      pool,
      programKey: `acct/p${++n}/auth`,
      libraryCode,
      createFunction: "create",
      config: { answer: 42 },
      projectRoles: ["Full access"],
      exposeProviderMessages: false,
      allowedHosts: [],
      logger,
      ...over,
    };
  }

  const login = { payload: { username: "u", password: "p" }, enablePasswordChange: false };

  it("accepts a const arrow create function, async create and async configure; configures once per isolate", async () => {
    const code = `
      let creations = 0;
      const create = async () => {
        creations++;
        let config;
        return {
          configure: async (c) => { await null; config = c; },
          authenticate: (payload) => ({ roleNames: ["Full access"], userData: { answer: config.answer, creations } }),
        };
      };`;
    const provider = createCustomProvider(options(code));
    for (let i = 0; i < 3; i++) {
      expect(await provider.authenticate(login)).to.deep.include({
        ok: true,
        globals: { answer: 42, creations: 1 },
      });
    }
  });

  it("passes the payload and the password-change flag, and maps a Date keyExpiration", async () => {
    const code = `function create() { return { authenticate(payload, flag) {
      return { roleNames: [], userIdentifier: payload.username + ":" + flag, keyExpiration: new Date(Date.now() + 60000),
               changePasswordResult: flag ? "success" : undefined };
    } } }`;
    const provider = createCustomProvider(options(code));
    const before = Date.now();
    const plain = await provider.authenticate(login);
    expect(plain).to.include({ ok: true, userIdentifier: "u:false" });
    expect(plain.ok && plain.keyExpiration).to.be.within(before + 59_000, before + 61_000);
    const change = await provider.authenticate({ ...login, enablePasswordChange: true });
    expect(change).to.include({ ok: true, userIdentifier: "u:true", changePasswordResult: "success" });
  });

  it("defaults getLoginInfo when the provider has none", async () => {
    const provider = createCustomProvider(
      options("function create() { return { authenticate() { return { roleNames: [] } } } }"),
    );
    expect((await provider.getLoginInfo()).fields.map((f) => f.name)).to.deep.equal(["username", "password"]);
    await provider.warm();
  });

  it("uses its own time limit, and a provider that times out is a failed login", async () => {
    const code =
      "function create() { return { authenticate: () => new Promise((r) => setTimeout(() => r({ roleNames: [] }), 300)) } }";
    expect(await createCustomProvider(options(code, { timeoutMs: 100 })).authenticate(login)).to.deep.equal({
      ok: false,
      reason: "refused",
    });
    expect(logger.text()).to.match(/did not finish within 100 ms/);
    expect(await createCustomProvider(options(code, { timeoutMs: 2000 })).authenticate(login)).to.include({
      ok: true,
    });
  });

  it("answers 503 when the sandbox cannot take the call at all", async () => {
    const provider = createCustomProvider(
      options("function create() { return { authenticate() { return { roleNames: [] } } } }"),
    );
    await pool.close();
    for (const call of [() => provider.authenticate(login), () => provider.getLoginInfo()]) {
      try {
        await call();
        expect.fail("expected a 503");
      } catch (e) {
        expect(e).to.be.instanceOf(ApiError);
        expect((e as ApiError).statusCode).to.equal(503);
        expect((e as ApiError).errorCode).to.equal(5031);
      }
    }
  });

  it("treats a payload that is not an object as an empty one", async () => {
    const code =
      "function create() { return { authenticate(p) { return { roleNames: [], userIdentifier: 'x', userData: { keys: Object.keys(p) } } } } }";
    const provider = createCustomProvider(options(code));
    const verdict = await provider.authenticate({
      payload: ["a"] as unknown as Record<string, unknown>,
      enablePasswordChange: false,
    });
    expect(verdict).to.deep.include({ ok: true, globals: { keys: [] } });
  });

  it("refuses create function names that are not identifiers", () => {
    for (const bad of ["a b", "x()", "1abc", "__tesseraProvider$", ""]) {
      expect(() => createCustomProvider(options("", { createFunction: bad })), bad).to.throw(TypeError);
    }
  });
});
