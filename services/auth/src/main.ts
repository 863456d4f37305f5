/** Starts the auth service: config from the environment, validated once. */
import { authConfigSchema, parseConfig } from "../../../shared/config/config.ts";
import { runService } from "../../../shared/http/serve.ts";
import { createAuthService } from "./service.ts";

await runService("auth", (env) => parseConfig(authConfigSchema, env), createAuthService);
