/**
 * JavaScript that runs inside isolates lives in real `.js` files next to its owner (linted by
 * Biome like the rest, copied into the image with the service's sources). Each such file holds
 * one function expression statement, `(function name(args) { ... });`, and its owner reads it
 * once, when the owner's module loads.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The function expression in `file` in `dir` (the owner's `import.meta.dirname`), without the
 * statement's semicolon, so the owner can call it in the isolate: `(${text})(arguments)`.
 */
export function isolateFunction(dir: string, file: string): string {
  return readFileSync(join(dir, file), "utf8").trimEnd().replace(/;$/, "");
}
