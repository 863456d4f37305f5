/**
 * Stored rows as text (write intents, change-feed events): relaxed EJSON, so that every BSON value
 * of a row survives the trip. Most rows hold nothing but JSON values, whose EJSON text is their
 * JSON text; those are written by JSON.stringify (a few microseconds less per row on every write),
 * the others by EJSON. Read back with BSON.EJSON.parse either way.
 */
import { BSON } from "mongodb";

/** True when `value` is made of strings, booleans, null, finite numbers other than -0, plain objects and arrays only. */
function plainJson(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      // -0 is finite, but JSON writes it as 0 where EJSON keeps it ({"$numberDouble": "-0.0"}).
      return Number.isFinite(value) && !Object.is(value, -0);
    case "object": {
      if (value === null) return true;
      if (Array.isArray(value))
        return Object.getPrototypeOf(value) === Array.prototype && value.every(plainJson);
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) if (!plainJson((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      // undefined (EJSON writes null where JSON leaves the field out), bigint, functions, symbols.
      return false;
  }
}

/** The relaxed EJSON text of `value` (`BSON.EJSON.stringify(value, { relaxed: true })`). */
export function ejsonText(value: unknown): string {
  return plainJson(value) ? JSON.stringify(value) : BSON.EJSON.stringify(value, { relaxed: true });
}
