/** Composition root of the console server: the built files, metrics, lifecycle. */
import path from "node:path";
import type { ConsoleConfig } from "../../../shared/config/config.ts";
import { createMetrics } from "../../../shared/http/metrics.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import type { Logger } from "../../../shared/logger.ts";
import { buildConsoleApp, CONSOLE_MOUNT } from "./app.ts";
import { loadStaticFiles } from "./static-files.ts";

/** Where `make console` (and the image build) put the built console. */
export const CONSOLE_BUILD_DIR = path.resolve(import.meta.dirname, "../dist");

export interface ConsoleService {
  app: ReturnType<typeof buildConsoleApp>;
  lifecycle: Lifecycle;
  close(): Promise<void>;
}

export async function createConsoleService(_config: ConsoleConfig, logger: Logger): Promise<ConsoleService> {
  const lifecycle: Lifecycle = { shuttingDown: false };
  const files = loadStaticFiles(CONSOLE_BUILD_DIR, CONSOLE_MOUNT);
  const app = buildConsoleApp({ logger, metrics: createMetrics("console"), lifecycle, files });
  return { app, lifecycle, close: async () => {} };
}
