/**
 * The console's browser code has no import circle (type-only imports count too: a
 * circle of types still ties the files' meanings together), and imports nothing of a
 * service: outside its own folder only the browser-safe parts of `shared/`.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";

const SRC = path.resolve(import.meta.dirname, "../../../services/console/ui/src");
const REPO = path.resolve(import.meta.dirname, "../../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(e.name) ? [full] : [];
  });
}

/** The files a file imports (relative imports only, resolved to whole paths). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const statement = /^(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gms;
  return [...text.matchAll(statement)].map((m) => path.resolve(path.dirname(file), m[1]!));
}

describe("console import graph", () => {
  const files = sourceFiles(SRC);
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it("sees the imports it checks", () => {
    expect(graph.get(path.join(SRC, "main.tsx"))).to.include(path.join(SRC, "screens/Projects.tsx"));
  });

  it("has no import circle", () => {
    const circles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        const from = trail.indexOf(file);
        circles.push([...trail.slice(from), file].map((f) => path.relative(SRC, f)).join(" → "));
        return;
      }
      state.set(file, "open");
      for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next, [...trail, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
    expect(circles).to.deep.equal([]);
  });

  it("imports nothing of a service, only shared/ outside its own folder", () => {
    const outside = [...graph.values()]
      .flat()
      .filter((f) => !f.startsWith(SRC))
      .map((f) => path.relative(REPO, f));
    expect(outside.filter((f) => !f.startsWith("shared/"))).to.deep.equal([]);
  });
});
