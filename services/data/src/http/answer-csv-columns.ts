/**
 * The CSV columns of an answer that no definition describes: a JavaScript
 * resource's, or one a response event reshaped. The answer must be a list of
 * objects (a trailing `next_batch` element aside) or one object; the columns
 * are their properties in the order they first appear, `@metadata` left out.
 * A value that is an object or an array is written as JSON text, as for json
 * columns. Anything else has no CSV form: 400/4001.
 */
import { errors } from "../../../../shared/errors.ts";
import { isPlainObject } from "../domain/model/column-values.ts";
import type { CsvColumn } from "./csv-writer.ts";

export function answerCsvColumns(answer: unknown, resourceName: string): CsvColumn[] {
  const objects = Array.isArray(answer) ? answer : [answer];
  if (!objects.every(isPlainObject)) {
    throw errors.malformed(
      `The answer of '${resourceName}' is not a list of objects, so it has no CSV form; use json or xml`,
    );
  }
  const names = new Set<string>();
  for (const object of objects)
    for (const name of Object.keys(object)) if (name !== "@metadata") names.add(name);
  return [...names].map((name) => ({ header: name, path: [name] }));
}
