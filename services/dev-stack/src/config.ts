/**
 * The dev stack's own settings (those of the stores it starts; the services parse theirs in
 * shared/config), read from the environment and validated once, on first use.
 */
import { z } from "zod";
import { parseConfig } from "../../../shared/config/config.ts";

/**
 * FerretDB's open-file limit when the dev stack starts it. MongoDB's production notes recommend
 * 64,000 open files for mongod; the embedded store holds up to four files per database it keeps warm
 * (the database, its WAL, its shared memory, a database descriptor SQLite holds back), so its limit decides how many tenants stay warm
 * (docs/operations.md §6c). At most what the kernel allows a process (fs.nr_open, 1,048,576 by default).
 */
export const DEFAULT_FERRETDB_FILE_LIMIT = 64_000;

const devStackSchema = z.object({
  FERRETDB_FILE_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1 << 20)
    .default(DEFAULT_FERRETDB_FILE_LIMIT),
});

export type DevStackConfig = z.infer<typeof devStackSchema>;

/** The dev stack's settings of `env`; throws the services' ConfigError listing every bad variable. */
export function parseDevStackConfig(env: NodeJS.ProcessEnv): DevStackConfig {
  return parseConfig(devStackSchema, env);
}

let parsedOnce: DevStackConfig | undefined;

/** The settings of this process's environment, parsed on first use. */
export function devStackConfig(): DevStackConfig {
  parsedOnce ??= parseDevStackConfig(process.env);
  return parsedOnce;
}
