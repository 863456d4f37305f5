/** Starts the console's static server: config from the environment, validated once. */
import { consoleConfigSchema, parseConfig } from "../../../shared/config/config.ts";
import { runService } from "../../../shared/http/serve.ts";
import { createConsoleService } from "./service.ts";

await runService("console", (env) => parseConfig(consoleConfigSchema, env), createConsoleService);
