/**
 * Secrets in project definitions are write-only: a custom provider's config
 * values are never answered once stored — not by the project, not by any
 * revision, not in a dry run's diff, not in the audit trail — and a definition
 * sent back with the masked values (as the console's editor does) keeps the
 * stored ones. Checked with logins through the sample secret-word provider.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { SecretBox } from "../../../services/data/src/store/secret-box.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminKey, putAdmin } from "../../support/admins.ts";
import { dataServiceEnv, startDataProcess } from "../../support/data-process.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { until } from "../../support/until.ts";

const code = readFileSync(
  path.resolve(import.meta.dirname, "../../../examples/providers/secret-word/secret-word.js"),
  "utf8",
);

/** A project or revision record of META_DB, as far as these tests read it. */
interface StoredDoc {
  _id: string;
  uid: string;
  definitionJson: string;
}

function secretWordProject(secretWord: unknown) {
  return demoProject({
    authentication: {
      provider: "custom",
      library: "secretWord",
      createFunction: "secretWordCreate",
      config: { secretWord, prompt: "The word?", roles: ["Full access"] },
    },
    libraries: { secretWord: { code } },
  });
}

describe("secrets in definitions are write-only", () => {
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  let reader: ReturnType<typeof adminClient>;
  const login = (word: string) =>
    projectClient(platform.baseUrl, "acme", "p").login({ username: "zoe", password: word });

  // The platform opens secrets sealed under either key and seals under the first.
  const [keyA, keyB] = [randomBytes(32).toString("base64"), randomBytes(32).toString("base64")];
  /** The project's record and its revisions' records as MongoDB keeps them. */
  const storedTexts = async () => {
    const meta = platform.data.mongo.db(platform.dataConfig.META_DB);
    const project = await meta.collection<StoredDoc>("projects").findOne({ _id: "acme/p" });
    const revisions = await meta
      .collection<StoredDoc>("project_revisions")
      .find({ account: "acme", project: "p" })
      .sort({ revision: 1 })
      .toArray();
    return { uid: project!.uid, texts: [project!.definitionJson, ...revisions.map((r) => r.definitionJson)] };
  };
  /** The id of the key each sealed value of the text names. */
  const sealedWith = (text: string) => [...text.matchAll(/"tsealed1:([0-9a-f]{16}):/g)].map((m) => m[1]);
  const idOf = (key: string) => new SecretBox([Buffer.from(key, "base64")]).seal("x").split(":")[1];

  before(async () => {
    platform = await startPlatform({ SECRETS_KEY: `${keyA},${keyB}` });
    operator = adminClient(platform.baseUrl, platform.adminToken);
    await operator.putAccount("acme");
    await putAdmin(operator, "acme", "rita", "reader", "rita-password-1");
    reader = adminClient(
      platform.baseUrl,
      await adminKey(platform.baseUrl, "acme", "rita", "rita-password-1"),
    );
    expect((await operator.putProject("acme", "p", secretWordProject("first-secret-word"))).status).to.equal(
      201,
    );
    const rotated = await operator.putProject("acme", "p", secretWordProject("second-secret-word"));
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(200);
  });
  after(() => platform.close());

  it("answers the project with every provider config value masked, to a reader and an admin alike", async () => {
    for (const client of [reader, operator]) {
      const r = await client.send("GET", "/accounts/acme/projects/p");
      expect(r.status).to.equal(200);
      expect(r.body.definition.authentication.config).to.deep.equal({
        secretWord: "********",
        prompt: "********",
        roles: "********",
      });
      expect(JSON.stringify(r.body)).to.not.contain('secret-word"');
    }
  });

  it("answers no revision with a secret: rotating a leaked one helps", async () => {
    for (const n of [1, 2]) {
      const r = await reader.send("GET", `/accounts/acme/projects/p/revisions/${n}`);
      expect(r.status).to.equal(200);
      expect(r.body.definition.authentication.config.secretWord).to.equal("********");
      const text = JSON.stringify(r.body);
      for (const word of ["first-secret-word", "second-secret-word"]) expect(text).to.not.contain(word);
    }
  });

  it("shows in a dry run's diff, the revision list and the audit which secret changed, never its value", async () => {
    const dry = await operator.send(
      "PUT",
      "/accounts/acme/projects/p?dryRun=true",
      secretWordProject("third-word"),
    );
    expect(dry.status).to.equal(200);
    expect(dry.body.authentication).to.deep.equal({ config: { changed: ["secretWord"] } });
    const revisions = await reader.send("GET", "/accounts/acme/projects/p/revisions");
    const audit = await reader.send("GET", "/accounts/acme/audit");
    const text = JSON.stringify([dry.body, revisions.body, audit.body]);
    for (const word of ["first-secret-word", "second-secret-word", "third-word"])
      expect(text).to.not.contain(word);
  });

  it("keeps the stored secret when the definition comes back with the masked value (the console's round trip)", async () => {
    const current = await operator.send("GET", "/accounts/acme/projects/p");
    const back = await operator.send("PUT", "/accounts/acme/projects/p", current.body.definition);
    expect(back.status, JSON.stringify(back.body)).to.equal(200);
    expect(back.body.summary).to.equal("no changes");
    expect((await login("second-secret-word")).status).to.equal(200);
    expect((await login("********")).status).to.equal(401);
  });

  it("keeps the stored secret when only the secret comes back masked", async () => {
    const r = await operator.send("PUT", "/accounts/acme/projects/p", secretWordProject("********"));
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.summary).to.equal("no changes");
    expect((await login("second-secret-word")).status).to.equal(200);
    expect((await login("********")).status).to.equal(401);
  });

  it("rotates a secret sent anew, keeping the other masked values", async () => {
    const current = await operator.send("GET", "/accounts/acme/projects/p");
    const definition = current.body.definition;
    definition.authentication.config.secretWord = "fourth-secret-word";
    const r = await operator.send("PUT", "/accounts/acme/projects/p", definition);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect((await login("fourth-secret-word")).status).to.equal(200);
    expect((await login("second-secret-word")).status).to.equal(401);
    const login2 = await projectClient(platform.baseUrl, "acme", "p").login({
      username: "zoe",
      password: "fourth-secret-word",
    });
    expect(login2.body.roles, "the masked roles were kept").to.deep.equal(["Full access"]);
  });

  it("keeps the secrets sealed at rest in the project's record and in every revision's", async () => {
    const { texts } = await storedTexts();
    expect(texts.length).to.be.at.least(4);
    for (const text of texts) {
      for (const word of ["first-secret-word", "second-secret-word", "fourth-secret-word", "The word?"])
        expect(text).to.not.contain(word);
      expect(sealedWith(text)).to.have.length(3);
      expect(new Set(sealedWith(text))).to.deep.equal(new Set([idOf(keyA)]));
    }
  });

  it("a data service started with a new key in front seals them all again; logins go on", async () => {
    // A revision recorded before there was a key: its secrets as they are.
    const { uid, texts } = await storedTexts();
    const legacy = JSON.parse(texts[1]!);
    legacy.authentication.config = { secretWord: "legacy-word", prompt: "The word?", roles: ["Full access"] };
    await platform.data.mongo
      .db(platform.dataConfig.META_DB)
      .collection<StoredDoc>("project_revisions")
      .updateOne({ _id: `${uid}/1` }, { $set: { definitionJson: JSON.stringify(legacy) } });
    expect((await storedTexts()).texts.some((t) => t.includes("legacy-word"))).to.equal(true);
    const next = await startDataProcess({
      ...dataServiceEnv(platform.dataConfig),
      SECRETS_KEY: `${keyB},${keyA}`,
    });
    try {
      await until("every secret sealed under the new key", async () =>
        (await storedTexts()).texts.every(
          (t) => sealedWith(t).length === 3 && sealedWith(t).every((id) => id === idOf(keyB)),
        ),
      );
    } finally {
      await next.cleanup();
    }
    expect((await storedTexts()).texts.some((t) => t.includes("legacy-word"))).to.equal(false);
    // The platform (both keys) opens what the other process sealed.
    const revision1 = await operator.send("GET", "/accounts/acme/projects/p/revisions/1");
    expect(revision1.status).to.equal(200);
    expect(revision1.body.definition.authentication.config.secretWord).to.equal("********");
    expect((await login("fourth-secret-word")).status).to.equal(200);
  });

  it("refuses a masked value where no value is stored (400), creating nothing", async () => {
    const r = await operator.send("PUT", "/accounts/acme/projects/fresh", secretWordProject("********"));
    expect(r.status).to.equal(400);
    expect(r.body.errorCode).to.equal(4001);
    expect(r.body.errorMessage).to.contain("$.authentication.config.secretWord");
    expect((await operator.send("GET", "/accounts/acme/projects/fresh")).status).to.equal(404);
  });
});
