/**
 * Text that came from outside (user code in the sandbox, a login provider's answer) made safe to
 * log and to show: control characters become spaces, and it is cut to at most `max` characters,
 * `…` marking the cut. `lines: "keep"` keeps tabs and line breaks (a stack trace reads as one);
 * `"join"` makes one trimmed line of it (a message, a name).
 */
export function safeText(value: unknown, max = 500, lines: "keep" | "join" = "keep"): string {
  const text = typeof value === "string" ? value : String(value);
  const clean =
    lines === "keep"
      ? // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
        text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ")
      : // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
        text.replace(/[\u0000-\u001f\u007f]/g, " ").trim();
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
