/** Starts the data service: config from the environment, validated once. */
import { dataConfigSchema, parseConfig } from "../../../shared/config/config.ts";
import { runService } from "../../../shared/http/serve.ts";
import { createDataService } from "./service.ts";

await runService("data", (env) => parseConfig(dataConfigSchema, env), createDataService);
