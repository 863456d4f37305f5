/**
 * What an edited text becomes when it is sent: the attribute's kind as read decides
 * (numbers as numbers, booleans as booleans; the server converts the rest to the
 * column's type, and says so when it cannot). An emptied value is null, except text.
 */
export function editedValue(original: unknown, text: string): unknown {
  if (typeof original === "string") return text;
  if (text.trim() === "") return null;
  if (typeof original === "number") {
    const n = Number(text);
    return Number.isFinite(n) ? n : text;
  }
  if (typeof original === "boolean" || text === "true" || text === "false") {
    return text === "true" ? true : text === "false" ? false : text;
  }
  if (typeof original === "object" && original !== null) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

export function editableText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
