/**
 * Builds the console into ../dist, served under /console/ by the console's server
 * (services/console/src). Everything is bundled: nothing is fetched from elsewhere
 * at run time, and no script or style is inlined (the server's policy forbids it).
 */
import path from "node:path";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/console/",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: path.resolve(import.meta.dirname, "../dist"),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
