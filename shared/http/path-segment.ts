/** The one percent-decoding of URL path segments in both services: 400/4001 when malformed. */
import { errors } from "../errors.ts";

export function decodePathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw errors.malformed("The URL is not valid percent-encoding");
  }
}
