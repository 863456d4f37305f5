/**
 * Rows and row ids as they come back from state the data service stored itself (the change feed's
 * entries, write intents): read through these schemas, not believed. A row is an object with an
 * `_id` of a row id's type; its columns hold whatever their types allow (BSON values included,
 * after EJSON), so they are kept as they are.
 */
import { z } from "zod";
import type { RowDocument } from "./tenant-rows.ts";

export const storedRowId = z.union([z.string(), z.number(), z.boolean()]);

const isRow = (value: unknown): value is RowDocument =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  storedRowId.safeParse((value as { _id?: unknown })._id).success;

export const storedRow = z.custom<RowDocument>(isRow, "not a row (an object with a row id as _id)");
