/** Validates a request body against a schema: 400/4001 listing every problem with its path. */
import type { z } from "zod";
import { errors } from "../errors.ts";

export function parseBody<T>(schema: z.ZodType<T>, body: unknown, what = "request body"): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => ({ path: ["$", ...i.path].join("."), message: i.message }));
  throw errors.malformed(`Invalid ${what}: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`, {
    problems,
  });
}
