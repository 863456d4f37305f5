/**
 * The original product's command-line client, `lac` (npm liveapicreator-cli 5.2.x),
 * run unchanged as a child process against Tessera through the edge:
 * login (reads @license, posts @authentication, keeps the key in
 * $HOME/.liveapicreator), get (list, paging, by key, sysfilter/sysorder),
 * post, put, delete, describe, schema list and openapi, logout. The client exits 0 even
 * when the server answers an error, so outcomes are checked in its output and
 * through the API. See docs/compatibility.md.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { expect } from "chai";
import { type CompatPlatform, PASSWORD, startCompatPlatform, USER } from "./compat-platform.ts";

const LAC = createRequire(import.meta.url).resolve("liveapicreator-cli/liveapicreator.js");

interface LacRun {
  /** Standard output without colour codes. */
  out: string;
  err: string;
  code: number;
}

/**
 * Runs `lac` with its own HOME (where it keeps its login files). TZ is pinned:
 * the client reads `expiration` (no zone, UTC) as local time.
 */
function lac(home: string, args: string[], env: Record<string, string> = {}): Promise<LacRun> {
  const plain = (s: string) => stripVTControlCharacters(s);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [LAC, ...args],
      {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: home,
          TZ: "UTC",
          FORCE_COLOR: "0",
          NODE_NO_WARNINGS: "1",
          ...env,
        },
        timeout: 20_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ out: plain(stdout), err: plain(stderr), code });
      },
    );
  });
}

function tempHome(): string {
  return mkdtempSync(path.join(os.tmpdir(), "tessera-lac-"));
}

describe("compat: lac (liveapicreator-cli) unchanged against Tessera", () => {
  let c: CompatPlatform;
  let home: string;
  const homes: string[] = [];
  const run = (...args: string[]) => lac(home, args);

  async function checksumOf(table: string, key: string): Promise<string> {
    const r = await c.api.get(c.checkKey, `${table}/${encodeURIComponent(key)}`);
    expect(r.body).to.have.length(1);
    return r.body[0]["@metadata"].checksum;
  }

  before(async () => {
    c = await startCompatPlatform();
    home = tempHome();
    homes.push(home);
  });
  after(async () => {
    for (const h of homes) rmSync(h, { recursive: true, force: true });
    await c?.platform.close();
  });

  describe("login", () => {
    it("reads @license, logs in, and keeps the new key in ~/.liveapicreator (mode 0600)", async () => {
      const r = await run("login", "-u", USER, "-p", PASSWORD, "-a", "tessera", c.projectUrl);
      expect(r.code).to.equal(0);
      expect(r.out).to.contain("This server licensed to: Tessera license_type: Tessera open platform");
      const m = /Login successful, this API key will expire on: (\S+)/.exec(r.out);
      expect(m, r.out).to.not.equal(null);
      expect(m![1]).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);

      const dir = path.join(home, ".liveapicreator");
      const file = readdirSync(dir).find((f) => f.endsWith(`--${USER}`))!;
      expect(file).to.equal(`${encodeURIComponent(c.projectUrl)}--${USER}`);
      expect(statSync(path.join(dir, file)).mode & 0o777).to.equal(0o600);
      const stored = JSON.parse(readFileSync(path.join(dir, file), "utf8"));
      expect(stored).to.include({ url: c.projectUrl, userName: USER, alias: "tessera" });
      expect(stored.loginInfo).to.include({ expiration: m![1], userIdentifier: USER });
      // The stored key is a real key of this project.
      const check = await c.api.get(stored.loginInfo.apikey, "customer");
      expect(check.status).to.equal(200);

      const status = await run("status");
      expect(status.out).to.match(new RegExp(`tessera\\s*│\\s*${c.projectUrl}\\s*│\\s*${USER}`));
      expect(status.out).to.contain(
        `You are currently logged in to CA Live API Creator server: ${c.projectUrl} as user ${USER}`,
      );
    });

    it("accepts the URL with a trailing slash (the client strips it)", async () => {
      const other = tempHome();
      homes.push(other);
      const r = await lac(other, ["login", "-u", USER, "-p", PASSWORD, `${c.projectUrl}/`]);
      expect(r.out).to.contain("Login successful");
      expect(
        JSON.parse(readFileSync(path.join(other, ".liveapicreator/currentServer.txt"), "utf8")).url,
      ).to.equal(c.projectUrl);
    });

    it("prints the server's errorMessage for bad credentials and stores nothing", async () => {
      const other = tempHome();
      homes.push(other);
      const r = await lac(other, ["login", "-u", "mallory", "-p", "not-the-password", c.projectUrl]);
      expect(r.out).to.contain("Login failed: Login failed");
      expect(r.out).to.not.contain("Login successful");
      expect(existsSync(path.join(other, ".liveapicreator"))).to.equal(false);
    });
  });

  describe("data", () => {
    it("post inserts one object, and an array in one transaction", async () => {
      const one = await run("post", "customer", "-j", '{"name":"Jones","credit_limit":1000,"region":"west"}');
      expect(one.out).to.contain("POST for customer:");
      expect(one.out).to.contain("I customer/Jones name:Jones balance:0 credit_limit:1000 region:west");
      expect(one.out).to.contain("# objects touched: 1");

      const many = await run(
        "post",
        "customer",
        "-m",
        "json",
        "-j",
        '[{"name":"Smith Co"},{"name":"Acme & Sons"}]',
      );
      const body = JSON.parse(many.out);
      expect(body.statusCode).to.equal(201);
      expect(body.txsummary.map((o: { name: string }) => o.name)).to.deep.equal(["Smith Co", "Acme & Sons"]);

      const rows = await c.api.get(c.checkKey, "customer?pagesize=100");
      expect(rows.body.map((o: { name: string }) => o.name)).to.include.members([
        "Jones",
        "Smith Co",
        "Acme & Sons",
      ]);
    });

    it("get lists, pages with next_batch, reads by key, and passes sysfilter/sysorder", async () => {
      const all = await run("get", "customer");
      expect(all.out).to.contain("GET for customer:");
      expect(all.out).to.contain("customer/Jones name:Jones balance:0 credit_limit:1000 region:west");
      expect(all.out).to.contain("customer/Smith%20Co name:Smith Co");
      expect(all.out).to.contain("# top-level objects: 3");

      // The extra next_batch element is shown as "more..." and not counted.
      const page = await run("get", "customer", "-z", "2");
      expect(page.out).to.contain("more...");
      expect(page.out).to.contain("# top-level objects: 2");

      // The key goes into the URL as typed; the client escapes the space.
      const byKey = await run("get", "customer", "-k", "Smith Co", "-m", "json");
      const rows = JSON.parse(byKey.out);
      expect(rows).to.have.length(1);
      expect(rows[0].name).to.equal("Smith Co");
      expect(rows[0]["@metadata"].checksum).to.equal(await checksumOf("customer", "Smith Co"));

      const filtered = await run(
        "get",
        "customer",
        "-f",
        "notequal(region:null)",
        "-s",
        "(name:desc)",
        "-m",
        "json",
      );
      expect(JSON.parse(filtered.out).map((o: { name: string }) => o.name)).to.deep.equal(["Jones"]);

      // A custom resource with its nested sub-resource.
      const resource = await run("get", "Customers", "-k", "Jones");
      expect(resource.out).to.contain("Customers/Jones Name:Jones Balance:0 Region:west Orders:[]");

      const missing = await run("get", "nothing");
      expect(missing.out).to.contain("Error: No resource 'nothing' in version 'v1'");

      // Named filters (-g) and sorts (-t) do not exist in Tessera: refused, not ignored.
      const named = await run("get", "customer", "-g", "myFilter(name:'Jones')");
      expect(named.out).to.contain(
        "Error: Parameter 'userfilter' (named filters and sorts) is not supported",
      );
      expect(named.out).to.not.contain("customer/Smith");
    });

    it("put updates by key with the checksum, or with the key in the body and 'override'", async () => {
      const checksum = await checksumOf("customer", "Jones");
      const byKey = await run(
        "put",
        "customer",
        "-k",
        "Jones",
        "-j",
        JSON.stringify({ "@metadata": { checksum }, credit_limit: 2000 }),
      );
      expect(byKey.out).to.contain("PUT for customer:");
      expect(byKey.out).to.contain("U customer/Jones name:Jones balance:0 credit_limit:2000 region:west");
      expect(byKey.out).to.contain("# objects touched: 1");

      // The stale checksum is now refused with the server's message.
      const stale = await run(
        "put",
        "customer",
        "-k",
        "Jones",
        "-j",
        JSON.stringify({ "@metadata": { checksum }, credit_limit: 1 }),
      );
      expect(stale.out).to.contain("Error: The checksum of 'customer' Jones does not match");

      const noChecksum = await run("put", "customer", "-k", "Jones", "-j", '{"credit_limit":1}');
      expect(noChecksum.out).to.contain("Error: '@metadata.checksum' is required");

      // The README's form: PUT to the collection, the key in the body.
      const inBody = await run(
        "put",
        "customer",
        "-j",
        JSON.stringify({ "@metadata": { checksum: "override" }, name: "Jones", credit_limit: 3000 }),
      );
      expect(inBody.out).to.contain("U customer/Jones name:Jones balance:0 credit_limit:3000");

      const row = (await c.api.get(c.checkKey, "customer/Jones")).body[0];
      expect(row.credit_limit).to.equal(3000);
      expect(row["@metadata"].checksum).to.not.equal(checksum);
    });

    it("delete removes by key with the checksum or 'override'; a missing object shows the 404 message", async () => {
      const checksum = await checksumOf("customer", "Jones");
      const del = await run("delete", "customer", "-k", "Jones", "-c", checksum);
      expect(del.out).to.contain("DELETE for customer:");
      expect(del.out).to.contain("D customer/Jones name:Jones");
      expect(del.out).to.contain("# objects deleted: 1 - # objects touched: 1");
      expect((await c.api.get(c.checkKey, "customer/Jones")).body).to.deep.equal([]);

      const override = await run("delete", "customer", "-k", "Smith%20Co", "-c", "override");
      expect(override.out).to.contain("D customer/Smith%20Co name:Smith Co");
      expect((await c.api.get(c.checkKey, "customer/Smith%20Co")).body).to.deep.equal([]);

      const missing = await run("delete", "customer", "-k", "Nobody", "-c", "override");
      expect(missing.out).to.contain("Error: No such object");
      expect(missing.out).to.contain("# objects touched: 0");
    });
  });

  describe("meta", () => {
    it("describe tables, tables/<name> (with or without a prefix), resources and license; schema list", async () => {
      const tables = await run("describe", "tables");
      expect(tables.out).to.match(/main\s+customer/);
      expect(tables.out).to.match(/main\s+purchaseorder/);
      expect(tables.out).to.contain("# Tables: 2");

      for (const name of ["customer", "main:customer"]) {
        const table = await run("describe", `tables/${name}`);
        expect(table.out).to.contain("Description of Table customer");
        // The key column is starred.
        expect(table.out).to.match(/name\s+string\s+\*/);
        expect(table.out).to.match(/credit_limit\s+number\s*\n/);
        expect(table.out).to.contain("# columns 4");
      }

      const resources = await run("describe", "resources");
      expect(resources.out).to.match(
        /TableBased\s+v1\s+Customers\s+http:\S+\/rest\/acme\/demo\/v1\/Customers\s/,
      );
      expect(resources.out).to.contain("# Resources: 2");

      const license = await run("describe", "license");
      expect(license.out).to.match(/company\s+license_type/);
      expect(license.out).to.contain("Tessera open platform");

      const schema = await run("schema", "list");
      expect(schema.out).to.match(/main\s+customer\s+customer/);
      expect(schema.out).to.contain("# tables: 2");
    });

    it("schema openapi prints the version's @docs, or writes it to --file", async () => {
      const printed = await run("schema", "openapi");
      const doc = JSON.parse(printed.out);
      expect(doc.openapi).to.equal("3.1.0");
      expect(doc.servers).to.deep.equal([{ url: c.projectUrl }]);
      expect(doc.paths).to.include.keys("/customer", "/purchaseorder/{key}", "/Customers", "/@docs");
      expect(doc).to.deep.equal((await c.api.get(c.checkKey, "@docs")).body);

      const file = path.join(home, "openapi.json");
      const written = await run("schema", "openapi", "--file", file);
      expect(written.out).to.contain(`has been exported to file: ${file}`);
      expect(JSON.parse(readFileSync(file, "utf8"))).to.deep.equal(doc);
      expect(statSync(file).mode & 0o777).to.equal(0o600);
    });
  });

  describe("client-side behaviour (documented in docs/compatibility.md)", () => {
    it("logout only forgets the current server: the key stays valid until it expires", async () => {
      const other = tempHome();
      homes.push(other);
      await lac(other, ["login", "-u", USER, "-p", PASSWORD, c.projectUrl]);
      const dir = path.join(other, ".liveapicreator");
      const file = readdirSync(dir).find((f) => f.endsWith(`--${USER}`))!;
      const key = JSON.parse(readFileSync(path.join(dir, file), "utf8")).loginInfo.apikey;
      const out = await lac(other, ["logout"]);
      expect(out.out).to.contain("Logout successful");
      expect(existsSync(path.join(dir, "currentServer.txt"))).to.equal(false);
      expect((await c.api.get(key, "customer")).status).to.equal(200);
    });

    it("reads 'expiration' as local time: east of UTC a one-hour key looks expired to the client", async () => {
      const other = tempHome();
      homes.push(other);
      await lac(other, ["login", "-u", USER, "-p", PASSWORD, c.projectUrl]);
      const tokyo = await lac(other, ["get", "customer"], { TZ: "Asia/Tokyo" });
      expect(tokyo.out).to.contain("The API key for this server has expired - you need to log in again");
    });
  });
});
