/**
 * Which query parameter a 4002 error is about, and where: its message reads
 * `Invalid filter at position 11: …` (1-based, in that parameter's text).
 */
export interface QueryErrorPlace {
  parameter: "filter" | "order" | "sysfilter" | "sysorder";
  /** 0-based offset in the parameter's text. */
  offset: number | undefined;
}

export function queryErrorPlace(message: string): QueryErrorPlace | undefined {
  const m = /^Invalid (filter|order|sysfilter|sysorder)(?: at position (\d+))?/.exec(message);
  if (!m) return undefined;
  return {
    parameter: m[1] as QueryErrorPlace["parameter"],
    offset: m[2] === undefined ? undefined : Math.max(0, Number(m[2]) - 1),
  };
}
