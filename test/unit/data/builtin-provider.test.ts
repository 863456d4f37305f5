/** The built-in provider's decisions, with in-memory fakes of its store and hasher (pure logic only). */
import { expect } from "chai";
import type { PasswordHasher } from "../../../services/data/src/credentials/passwords.ts";
import { createBuiltinProvider } from "../../../services/data/src/providers/builtin-provider.ts";
import type {
  ProjectIncarnation,
  StoredUser,
  UserStore,
} from "../../../services/data/src/store/user-store.ts";

function setup(users: Record<string, StoredUser>) {
  const calls: string[] = [];
  const hasher: PasswordHasher = {
    hash: async (p) => `hash:${p}`,
    verify: async (h, p) => {
      calls.push("verify");
      return h === `hash:${p}` || h === `legacy:${p}`;
    },
    verifyAgainstDummy: async () => {
      calls.push("dummy");
      return false;
    },
    policyProblem: (p) => (p.length < 8 ? "too short" : null),
    needsRehash: (h) => h.startsWith("legacy:"),
  };
  const store = {
    get: async (_p: ProjectIncarnation, u: string) => users[u] ?? null,
    changePassword: async (_p: ProjectIncarnation, u: string, expected: string, next: string) => {
      if (users[u]?.passwordHash !== expected) return false;
      users[u]!.passwordHash = next;
      return true;
    },
  } as unknown as UserStore;
  const provider = createBuiltinProvider({
    users: store,
    hasher,
    project: { account: "a", name: "p", uid: "u1" },
    projectRoles: new Set(["R1"]),
  });
  return { provider, calls };
}

const alice = (): StoredUser => ({
  username: "alice",
  passwordHash: "hash:secret-1",
  roles: ["R1", "Gone"],
  globals: { region: "west" },
});

describe("built-in provider", () => {
  it("verifies unknown users against a dummy hash, so both failures cost the same", async () => {
    const { provider, calls } = setup({ alice: alice() });
    expect(
      await provider.authenticate({
        payload: { username: "nobody", password: "x" },
        enablePasswordChange: false,
      }),
    ).to.deep.equal({ ok: false, reason: "refused" });
    expect(calls).to.deep.equal(["dummy"]);
    expect(
      await provider.authenticate({
        payload: { username: "alice", password: "x" },
        enablePasswordChange: false,
      }),
    ).to.deep.equal({ ok: false, reason: "refused" });
    expect(calls).to.deep.equal(["dummy", "verify"]);
  });
  it("returns only roles the project still has, and the user's globals", async () => {
    const { provider } = setup({ alice: alice() });
    const v = await provider.authenticate({
      payload: { username: "alice", password: "secret-1" },
      enablePasswordChange: false,
    });
    expect(v).to.deep.include({
      ok: true,
      userIdentifier: "alice",
      roles: ["R1"],
      globals: { region: "west" },
    });
    expect(v).to.not.have.property("changePasswordResult");
  });
  it("changes the password on request, reporting failure reasons without failing the login", async () => {
    const users = { alice: alice() };
    const { provider } = setup(users);
    const short = await provider.authenticate({
      payload: { username: "alice", password: "secret-1", newPassword: "x" },
      enablePasswordChange: true,
    });
    expect(short).to.deep.include({
      ok: true,
      changePasswordResult: "failure",
      changePasswordMessage: "too short",
    });
    const missing = await provider.authenticate({
      payload: { username: "alice", password: "secret-1" },
      enablePasswordChange: true,
    });
    expect(missing).to.deep.include({ changePasswordResult: "failure" });
    const ok = await provider.authenticate({
      payload: { username: "alice", password: "secret-1", new_password: "secret-22" },
      enablePasswordChange: true,
    });
    expect(ok).to.deep.include({ changePasswordResult: "success" });
    expect(users.alice.passwordHash).to.equal("hash:secret-22");
  });
  it("replaces an imported (legacy) hash that verified with a new one, once; a wrong password changes nothing", async () => {
    const users = { alice: { ...alice(), passwordHash: "legacy:secret-1" } };
    const { provider } = setup(users);
    const wrong = await provider.authenticate({
      payload: { username: "alice", password: "nope" },
      enablePasswordChange: false,
    });
    expect(wrong.ok).to.equal(false);
    expect(users.alice.passwordHash).to.equal("legacy:secret-1");
    const first = await provider.authenticate({
      payload: { username: "alice", password: "secret-1" },
      enablePasswordChange: false,
    });
    expect(first.ok).to.equal(true);
    expect(users.alice.passwordHash).to.equal("hash:secret-1");
  });
  it("rejects non-string credentials without touching the store", async () => {
    const { provider, calls } = setup({ alice: alice() });
    expect(
      (
        await provider.authenticate({
          payload: { username: ["alice"], password: "secret-1" },
          enablePasswordChange: false,
        })
      ).ok,
    ).to.equal(false);
    expect(calls).to.deep.equal([]);
  });
});
