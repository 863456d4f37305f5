/**
 * The module structure (docs/architecture.md). In every service's sources,
 * the console's UI and shared/: no file imports itself back through others
 * (no file circles) and no folder imports itself back through others (no
 * folder circles; a subfolder counts as a folder of its own). Services import
 * only their own files and shared/, which imports no service. In the data
 * service, the domain and the rules reach the store only through the types of
 * its port — never the MongoDB driver, never a store module's code.
 */
import path from "node:path";
import { expect } from "chai";
import {
  circles,
  fileGraph,
  folderGraph,
  type Import,
  isInside,
  treeImports,
} from "../../support/import-graph.ts";

const REPO = path.resolve(import.meta.dirname, "../../..");
const TREES = [
  "shared",
  "services/data/src",
  "services/auth/src",
  "services/console/src",
  "services/console/ui/src",
  "services/dev-stack/src",
];

/** Store modules whose types the domain and the rules may name: the port and the stores the admin domain is given. */
const STORE_PORT = new Set([
  "store/tenant-rows.ts",
  "store/storage-names.ts",
  "store/meta-store.ts",
  "store/admin-store.ts",
  "store/user-store.ts",
  "store/audit-store.ts",
  "store/revision-store.ts",
  "store/leases.ts",
  "store/project-cache.ts",
]);
const DRIVERS = new Set(["mongodb", "mongoose"]);

const importsOfTree = new Map(TREES.map((tree) => [tree, treeImports(path.join(REPO, tree))]));
const dataImports = importsOfTree.get("services/data/src")!;

/** The data service's layer of a file: its top folder under src/. */
function layerOf(relative: string): string {
  return relative.includes(path.sep) ? relative.split(path.sep)[0]! : "(root)";
}

describe("import graph", () => {
  it("sees the imports it checks", () => {
    expect(dataImports.some((i) => i.from === path.join("domain", "write", "writer.ts"))).to.equal(true);
    expect(folderGraph(dataImports).get("http")?.has(path.join("domain", "write"))).to.equal(true);
    for (const tree of TREES) expect(importsOfTree.get(tree)!.filter(isInside), tree).to.not.be.empty;
  });

  for (const tree of TREES) {
    describe(tree, () => {
      const imports = importsOfTree.get(tree)!;

      it("has no file circles", () => {
        expect(circles(fileGraph(imports)).map((c) => c.join(" ↔ "))).to.deep.equal([]);
      });

      it("has no folder circles", () => {
        expect(circles(folderGraph(imports)).map((c) => c.join(" ↔ "))).to.deep.equal([]);
      });
    });
  }

  it("services import only their own files and shared/; shared/ imports no service", () => {
    const outside = (tree: string, i: Import) => {
      const target = path.relative(REPO, path.resolve(REPO, tree, i.target));
      return target.startsWith("services") && !target.startsWith(`${tree}${path.sep}`);
    };
    const offending = TREES.flatMap((tree) =>
      importsOfTree
        .get(tree)!
        .filter((i) => i.target.startsWith("..") && outside(tree, i))
        .map((i) => `${tree}/${i.from} → ${i.target}`),
    );
    expect(offending).to.deep.equal([]);
  });
});

describe("data service layers", () => {
  it("has no cycles between its top folders", () => {
    expect(circles(folderGraph(dataImports, layerOf)).map((c) => c.join(" ↔ "))).to.deep.equal([]);
  });

  it("the domain and the rules import no MongoDB driver", () => {
    const offending = dataImports.filter(
      (i) => ["domain", "rules"].includes(layerOf(i.from)) && DRIVERS.has(i.target),
    );
    expect(offending.map((i) => `${i.from} → ${i.target}`)).to.deep.equal([]);
  });

  it("the domain and the rules use only the types of the store's port", () => {
    const offending = dataImports.filter(
      (i) =>
        ["domain", "rules"].includes(layerOf(i.from)) &&
        layerOf(i.target) === "store" &&
        (!i.typeOnly || !STORE_PORT.has(i.target)),
    );
    expect(offending.map((i) => `${i.from} → ${i.target}${i.typeOnly ? " (types)" : ""}`)).to.deep.equal([]);
  });

  it("sends outbound HTTP through one path: egress/http-request.ts (docs/architecture.md#outbound-http)", () => {
    const client = dataImports.filter((i) => i.target === "undici" && !i.typeOnly).map((i) => i.from);
    expect(client).to.deep.equal([path.join("egress", "http-request.ts")]);
    // Webhooks and the oidc provider send through it themselves, not through the sandbox's host function.
    const sendingThrough = (file: string) =>
      dataImports.filter((i) => i.from === file && !i.typeOnly).map((i) => i.target);
    for (const file of [path.join("hooks", "egress.ts"), path.join("providers", "oidc-keys.ts")]) {
      expect(sendingThrough(file), file).to.include(path.join("egress", "http-request.ts"));
      expect(sendingThrough(file), file).to.not.include(path.join("sandbox", "fetch.ts"));
    }
    expect(sendingThrough(path.join("sandbox", "fetch.ts"))).to.include(
      path.join("egress", "http-request.ts"),
    );
  });

  it("the store imports nothing of the layers above it", () => {
    const offending = dataImports.filter(
      (i) =>
        layerOf(i.from) === "store" &&
        ["domain", "rules", "http", "scripts", "providers", "feed"].includes(layerOf(i.target)),
    );
    expect(offending.map((i) => `${i.from} → ${i.target}`)).to.deep.equal([]);
  });
});
