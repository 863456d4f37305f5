/**
 * The data service's module structure (docs/architecture.md): folders import
 * each other in one direction only, and the domain and the rules reach the
 * store only through the types of its port — never the MongoDB driver, never
 * a store module's code.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";

const SRC = path.resolve(import.meta.dirname, "../../../services/data/src");

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

interface Import {
  from: string;
  /** Resolved path under src/ for relative imports, else the package name. */
  target: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith(".ts") ? [full] : [];
  });
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const from = path.relative(SRC, file);
  const out: Import[] = [];
  const statement = /^(import|export)\s+(type\s+)?([^;]*?)\s*from\s+"([^"]+)"/gms;
  for (const m of text.matchAll(statement)) {
    const specifier = m[4]!;
    const target = specifier.startsWith(".")
      ? path.relative(SRC, path.resolve(path.dirname(file), specifier))
      : specifier;
    // `import { type A, type B }` erases like `import type { A, B }`.
    const names = m[3]!
      .replace(/[{}]/g, "")
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean);
    const typeOnly = m[2] !== undefined || (names.length > 0 && names.every((n) => /^type\s/.test(n)));
    out.push({ from, target, typeOnly });
  }
  for (const m of text.matchAll(/import\(\s*"([^"]+)"\s*\)/g)) {
    const specifier = m[1]!;
    const target = specifier.startsWith(".")
      ? path.relative(SRC, path.resolve(path.dirname(file), specifier))
      : specifier;
    out.push({ from, target, typeOnly: false });
  }
  return out;
}

function folderOf(relative: string): string {
  return relative.includes(path.sep) ? relative.split(path.sep)[0]! : "(root)";
}

const imports = sourceFiles(SRC).flatMap(importsOf);

/** Folder → folders it imports (types included: a cycle of types is still a cycle of knowledge). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const i of imports) {
    if (i.target.startsWith("..") || !i.target.endsWith(".ts")) continue; // shared/ or a package
    const a = folderOf(i.from);
    const b = folderOf(i.target);
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return graph;
}

/** Each cycle once, as the folders along it. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const found = new Map<string, string[]>();
  const walk = (start: string, at: string, trail: string[]) => {
    for (const next of graph.get(at) ?? []) {
      if (next === start) {
        const key = [...trail].sort().join(",");
        if (!found.has(key)) found.set(key, [...trail, start]);
      } else if (!trail.includes(next)) walk(start, next, [...trail, next]);
    }
  };
  for (const folder of graph.keys()) walk(folder, folder, [folder]);
  return [...found.values()];
}

describe("data service import graph", () => {
  it("sees the imports it checks", () => {
    expect(imports.some((i) => i.from === path.join("domain", "write", "writer.ts"))).to.equal(true);
    expect(folderGraph().get("http")?.has("domain")).to.equal(true);
  });

  it("has no folder cycles", () => {
    expect(cycles(folderGraph()).map((c) => c.join(" → "))).to.deep.equal([]);
  });

  it("the domain and the rules import no MongoDB driver", () => {
    const offending = imports.filter(
      (i) => ["domain", "rules"].includes(folderOf(i.from)) && DRIVERS.has(i.target),
    );
    expect(offending.map((i) => `${i.from} → ${i.target}`)).to.deep.equal([]);
  });

  it("the domain and the rules use only the types of the store's port", () => {
    const offending = imports.filter(
      (i) =>
        ["domain", "rules"].includes(folderOf(i.from)) &&
        folderOf(i.target) === "store" &&
        (!i.typeOnly || !STORE_PORT.has(i.target)),
    );
    expect(offending.map((i) => `${i.from} → ${i.target}${i.typeOnly ? " (types)" : ""}`)).to.deep.equal([]);
  });

  it("the store imports nothing of the layers above it", () => {
    const offending = imports.filter(
      (i) =>
        folderOf(i.from) === "store" &&
        ["domain", "rules", "http", "scripts", "providers"].includes(folderOf(i.target)),
    );
    expect(offending.map((i) => `${i.from} → ${i.target}`)).to.deep.equal([]);
  });
});
