/**
 * Builds the console into ../dist, served under /console/ by the console's server
 * (services/console/src). Everything is bundled: nothing is fetched from elsewhere
 * at run time, and no script or style is inlined (the server's policy forbids it).
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { defineConfig, type Plugin } from "vite";

const OUT_DIR = path.resolve(import.meta.dirname, "../dist");

/**
 * Writes a gzip (`.gz`) and a brotli (`.br`) copy beside every text file of the build, at
 * the strongest settings (done once, at build): the server answers with the one the browser
 * accepts and never compresses per request.
 */
function precompress(): Plugin {
  return {
    name: "tessera-precompress",
    apply: "build",
    writeBundle(_options, bundle) {
      for (const name of Object.keys(bundle)) {
        if (!/\.(js|css|html|svg|json|txt)$/.test(name)) continue;
        const file = path.join(OUT_DIR, name);
        const body = readFileSync(file);
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
        );
      }
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: "/console/",
  logLevel: "warn",
  plugins: [precompress()],
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: OUT_DIR,
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
