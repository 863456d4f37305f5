/**
 * Reads CSV text (RFC 4180, as the data API writes it: a header row, then records; fields
 * with commas, quotes or line breaks quoted, quotes doubled; CRLF or LF line ends) into
 * records that remember where they start and which fields were quoted — an empty field is
 * null in the API's CSV, a quoted empty one is the empty string.
 *
 * Hand-written rather than csv-parse (which the tests use): its module entry needs Node's
 * Buffer, and its browser bundle carries a Buffer of its own; this is all the console needs.
 */
export interface CsvField {
  text: string;
  quoted: boolean;
}

export interface CsvRecord {
  /** The line (from 1) the record starts on. */
  line: number;
  fields: CsvField[];
}

export class CsvSyntaxError extends Error {}

export function csvRecords(input: string): CsvRecord[] {
  const text = input.startsWith("\uFEFF") ? input.slice(1) : input;
  const records: CsvRecord[] = [];
  let fields: CsvField[] = [];
  let line = 1;
  let start = 1;
  let i = 0;
  const endRecord = () => {
    // A blank line is no record.
    const [only, ...more] = fields;
    if (more.length > 0 || only === undefined || only.text !== "" || only.quoted)
      records.push({ line: start, fields });
    fields = [];
  };
  while (i <= text.length) {
    let field: CsvField;
    if (text[i] === '"') {
      let value = "";
      let j = i + 1;
      for (;;) {
        const quote = text.indexOf('"', j);
        if (quote < 0) throw new CsvSyntaxError(`Line ${start}: a quoted field is not closed.`);
        value += text.slice(j, quote);
        if (text[quote + 1] === '"') {
          value += '"';
          j = quote + 2;
        } else {
          j = quote + 1;
          break;
        }
      }
      line += (text.slice(i, j).match(/\r\n|\r|\n/g) ?? []).length;
      field = { text: value, quoted: true };
      i = j;
      if (i < text.length && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r")
        throw new CsvSyntaxError(`Line ${line}: text after a closing quote.`);
    } else {
      let j = i;
      while (j < text.length && text[j] !== "," && text[j] !== "\n" && text[j] !== "\r") j++;
      field = { text: text.slice(i, j), quoted: false };
      i = j;
    }
    fields.push(field);
    if (text[i] === ",") {
      i++;
      continue;
    }
    // End of a record: a line break, or the end of the text.
    endRecord();
    if (i >= text.length) break;
    i += text[i] === "\r" && text[i + 1] === "\n" ? 2 : 1;
    line++;
    start = line;
    if (i === text.length) break;
  }
  return records;
}
