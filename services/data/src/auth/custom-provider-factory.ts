/**
 * Custom providers of projects (JavaScript in the sandbox): one sandbox pool
 * per process, one provider instance per project revision.
 */
import type { DataConfig } from "../../../../shared/config.ts";
import { errors } from "../../../../shared/errors.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { ProjectModel } from "../domain/project-model.ts";
import type { AuthProvider } from "./provider.ts";

export interface CustomProviderFactory {
  providerFor(project: ProjectModel): AuthProvider;
  close(): Promise<void>;
}

export function createCustomProviderFactory(_options: {
  config: DataConfig;
  logger: Logger;
}): CustomProviderFactory {
  return {
    providerFor() {
      throw errors.unavailable("Custom authentication providers");
    },
    async close() {},
  };
}
