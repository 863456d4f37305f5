/**
 * `make ingress`: writes deploy/base/ingress.yaml from the routing table (shared/routes.json,
 * rendered by shared/routing/ingress.ts). test/deploy/ingress-routes.test.ts fails while the
 * file and the table disagree.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { ingressManifest } from "../../../shared/routing/ingress.ts";

const file = path.resolve(import.meta.dirname, "../../../deploy/base/ingress.yaml");
writeFileSync(file, ingressManifest());
process.stdout.write(`[ingress] wrote ${path.relative(process.cwd(), file)} from shared/routes.json\n`);
