#!/usr/bin/env node
// Converts the Kubernetes OpenAPI v2 document (api/openapi-spec/swagger.json of the
// Go module k8s.io/kubernetes) into "standalone-strict" JSON schemas, one file per
// API kind and version, in the layout kubeconform reads:
//
//   <out>/<kind>-<group first label>-<version>.json   (e.g. deployment-apps-v1.json)
//   <out>/<kind>-<version>.json                       (core group, e.g. service-v1.json)
//
// "standalone": every file carries the definitions it needs under $defs (no
// references to other files, nothing fetched). "strict": every object schema that
// lists its properties gets additionalProperties:false, so an unknown or misspelt
// field is an error (as `kubectl --validate=strict` does), and null is not accepted
// where the API wants a value. IntOrString accepts a string or an integer, a
// Quantity a string or a number, as the API server does.
//
// Plain JavaScript (not TypeScript) so that it runs on any Node >= 18 at
// tool-install time. Usage: node openapi-to-jsonschema.mjs <swagger.json> <out dir>

import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [swaggerPath, outDir] = process.argv.slice(2);
if (!swaggerPath || !outDir) {
  console.error("usage: openapi-to-jsonschema.mjs <swagger.json> <out dir>");
  process.exit(2);
}

const swagger = JSON.parse(readFileSync(swaggerPath, "utf8"));
const definitions = swagger.definitions;
if (!definitions || typeof definitions !== "object") {
  console.error(`${swaggerPath}: no "definitions" (not an OpenAPI v2 document?)`);
  process.exit(1);
}

const REF_PREFIX = "#/definitions/";
const QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/** Rewrites one schema node: refs to $defs, strictness, int-or-string, no descriptions. */
function convert(node) {
  if (Array.isArray(node)) return node.map(convert);
  if (node === null || typeof node !== "object") return node;
  if (node.format === "int-or-string") return { oneOf: [{ type: "string" }, { type: "integer" }] };
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "description") continue;
    if (key === "$ref" && typeof value === "string" && value.startsWith(REF_PREFIX)) {
      out.$ref = `#/$defs/${value.slice(REF_PREFIX.length)}`;
    } else if (key === "properties" && value && typeof value === "object") {
      // property names are not schema keywords: convert each property's schema
      out.properties = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, convert(s)]));
    } else {
      out[key] = convert(value);
    }
  }
  if (out.properties && !("additionalProperties" in out)) out.additionalProperties = false;
  return out;
}

function convertDefinition(name) {
  if (name === QUANTITY) return { oneOf: [{ type: "string" }, { type: "number" }] };
  return convert(definitions[name]);
}

/** Names of all definitions reachable from `root` through $ref. */
function reachable(root) {
  const seen = new Set();
  const stack = [root];
  while (stack.length > 0) {
    const name = stack.pop();
    if (seen.has(name)) continue;
    if (!definitions[name]) throw new Error(`dangling $ref to ${name}`);
    seen.add(name);
    const walk = (node) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") {
        for (const [key, value] of Object.entries(node)) {
          if (key === "$ref" && typeof value === "string" && value.startsWith(REF_PREFIX)) {
            stack.push(value.slice(REF_PREFIX.length));
          } else walk(value);
        }
      }
    };
    walk(definitions[name]);
  }
  return seen;
}

const tmpDir = `${outDir}.tmp-${process.pid}`;
rmSync(tmpDir, { recursive: true, force: true });
mkdirSync(tmpDir, { recursive: true });

let written = 0;
const files = new Map();
for (const [name, def] of Object.entries(definitions)) {
  const gvks = def["x-kubernetes-group-version-kind"];
  if (!Array.isArray(gvks)) continue;
  // API object kinds only: skip the shared meta kinds (Status, DeleteOptions, WatchEvent, ...)
  if (name.startsWith("io.k8s.apimachinery.")) continue;
  if (!def.properties?.kind || !def.properties?.apiVersion) continue;
  const defs = {};
  for (const dep of [...reachable(name)].sort()) {
    if (dep !== name) defs[dep] = convertDefinition(dep);
  }
  for (const { group, version, kind } of gvks) {
    const apiVersion = group ? `${group}/${version}` : version;
    const suffix = group ? `-${group.split(".")[0].toLowerCase()}-${version}` : `-${version}`;
    const file = `${kind.toLowerCase()}${suffix}.json`;
    if (files.has(file)) throw new Error(`${file}: both ${files.get(file)} and ${name}`);
    files.set(file, name);
    const root = convertDefinition(name);
    root.properties.apiVersion = { type: "string", enum: [apiVersion] };
    root.properties.kind = { type: "string", enum: [kind] };
    root.required = [...new Set([...(root.required ?? []), "apiVersion", "kind"])];
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: `https://tessera.invalid/k8s-schemas/${file}`,
      title: `${apiVersion} ${kind}`,
      ...root,
      $defs: defs,
    };
    writeFileSync(join(tmpDir, file), JSON.stringify(schema));
    written++;
  }
}
if (written === 0) throw new Error("no kinds found");
rmSync(outDir, { recursive: true, force: true });
renameSync(tmpDir, outDir);
console.error(`wrote ${written} standalone-strict schemas to ${outDir}`);
