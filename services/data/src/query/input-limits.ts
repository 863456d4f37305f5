/** Hard limits against hostile input; exceeding any of them is a 400/4002. */
export const LIMITS = {
  /** Characters (UTF-16 code units) in one filter, order, sysfilter or sysorder text. */
  maxTextLength: 4096,
  /** Nesting of parentheses and `not` in one filter. */
  maxDepth: 32,
  /** Values in one `in (...)` list. */
  maxInList: 1000,
  /** `%` wildcards (after merging adjacent ones) in one like pattern: bounds regex backtracking. */
  maxLikeWildcards: 8,
  /** Keys in one order / sysorder. */
  maxOrderKeys: 32,
} as const;
