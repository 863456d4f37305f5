/**
 * The import graph of a source tree, read from the files' import statements
 * as text (no compiler): each import with the file it resolves to, the graph
 * of files and of folders, and the circles in a graph.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export interface Import {
  /** The importing file, relative to the tree's root. */
  from: string;
  /** Resolved path relative to the root for relative imports (it starts with `..` outside the tree), else the package name. */
  target: string;
  typeOnly: boolean;
}

const SOURCE = /\.tsx?$/;

/** The TypeScript files under `dir`, absolute. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return SOURCE.test(e.name) && !e.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** The imports of one file (static, re-exports and dynamic `import()`), targets relative to `root`. */
export function importsOf(file: string, root: string): Import[] {
  const text = readFileSync(file, "utf8");
  const from = path.relative(root, file);
  const resolve = (specifier: string) =>
    specifier.startsWith(".") ? path.relative(root, path.resolve(path.dirname(file), specifier)) : specifier;
  const out: Import[] = [];
  const statement = /^(import|export)\s+(type\s+)?([^;]*?)\s*from\s+"([^"]+)"/gms;
  for (const m of text.matchAll(statement)) {
    // `import { type A, type B }` erases like `import type { A, B }`.
    const names = m[3]!
      .replace(/[{}]/g, "")
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean);
    const typeOnly = m[2] !== undefined || (names.length > 0 && names.every((n) => /^type\s/.test(n)));
    out.push({ from, target: resolve(m[4]!), typeOnly });
  }
  for (const m of text.matchAll(/^import\s+"([^"]+)"/gm))
    out.push({ from, target: resolve(m[1]!), typeOnly: false });
  for (const m of text.matchAll(/import\(\s*"([^"]+)"\s*\)/g))
    out.push({ from, target: resolve(m[1]!), typeOnly: false });
  return out;
}

/** Every import of every source file under `root`. */
export function treeImports(root: string): Import[] {
  return sourceFiles(root).flatMap((file) => importsOf(file, root));
}

/** True for an import of a source file inside the tree. */
export function isInside(i: Import): boolean {
  return !i.target.startsWith("..") && SOURCE.test(i.target);
}

/** The folder a file is in, relative to the root (`(root)` for the root itself). */
export function folderOf(relative: string): string {
  const dir = path.dirname(relative);
  return dir === "." ? "(root)" : dir;
}

export type Graph = Map<string, Set<string>>;

function addEdge(graph: Graph, a: string, b: string): void {
  if (!graph.has(a)) graph.set(a, new Set());
  if (!graph.has(b)) graph.set(b, new Set());
  graph.get(a)!.add(b);
}

/** File → files it imports inside the tree (types included: a circle of types is still a circle of knowledge). */
export function fileGraph(imports: Import[]): Graph {
  const graph: Graph = new Map();
  for (const i of imports) if (isInside(i)) addEdge(graph, i.from, i.target);
  return graph;
}

/** Folder → other folders it imports inside the tree; `folder` maps a file to its folder. */
export function folderGraph(imports: Import[], folder: (file: string) => string = folderOf): Graph {
  const graph: Graph = new Map();
  for (const i of imports) {
    if (!isInside(i)) continue;
    const a = folder(i.from);
    const b = folder(i.target);
    if (a !== b) addEdge(graph, a, b);
  }
  return graph;
}

/** The circles of a graph: each group of nodes that reach each other (Tarjan's components of more than one node), sorted. */
export function circles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
