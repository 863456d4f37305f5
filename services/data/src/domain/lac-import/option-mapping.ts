/**
 * The export's `ProjectOptions` (the API's settings, by `projectoptiontype_ident`):
 * "Permit Authorization parameter in URL" becomes `authentication.permitAuthParameter`,
 * "Default response format" each version's `defaultResponseFormat`; a setting whose
 * value is Tessera's fixed behaviour (page size 20, at most 5000, `@metadata`) maps to
 * nothing; any other is reported with its value.
 */
import { VERSION_RESPONSE_FORMATS, type VersionResponseFormat } from "../definition/project-definition.ts";
import { exportPath, type ImportReport } from "./import-report.ts";
import type { LacProject } from "./lac-export.ts";

/** The option types the CLI's docs name (docs/apioptions.md of the admin CLI), by ident. */
const OPTION_NAMES: Record<number, string> = {
  1: "Aggregate Default Override",
  2: "Type base URI",
  3: "HTTPS only",
  4: "Metadata name",
  5: "Checksum Size Limit",
  6: "Inline Limit Default",
  7: "Page Size Default",
  8: "Maximum Page Size",
  9: "Chunk Size Default",
  10: "Stored Procedure Row Limit",
  11: "Stored Procedure Inline Limit",
  12: "Permit Authorization parameter in URL",
  13: "Tech docs URL",
  14: "User docs URL",
  15: "Default response format",
};

/** Values that are what Tessera does anyway. */
const SAME_AS_TESSERA: Record<number, string> = {
  1: "false",
  3: "false",
  4: "@metadata",
  7: "20",
  8: "5000",
};
/** Informational settings with nothing to carry over. */
const NOTHING_TO_CARRY = new Set([2, 13, 14]);

export interface MappedOptions {
  permitAuthParameter?: boolean;
  defaultResponseFormat?: VersionResponseFormat;
}

export function mapOptions(project: LacProject, report: ImportReport): MappedOptions {
  const options: MappedOptions = {};
  project.ProjectOptions.forEach((option, index) => {
    const where = exportPath("ProjectOptions", index);
    const type = option.projectoptiontype_ident;
    const value = option.option_value;
    const label = OPTION_NAMES[type] ?? `option type ${type}`;
    if (value == null || value === "null" || NOTHING_TO_CARRY.has(type) || SAME_AS_TESSERA[type] === value)
      return;
    if (type === 12 && (value === "true" || value === "false")) {
      options.permitAuthParameter = value === "true";
      return;
    }
    if (type === 15) {
      const format = VERSION_RESPONSE_FORMATS.find((f) => f.toLowerCase() === value.toLowerCase());
      if (format) {
        if (format !== "json") options.defaultResponseFormat = format;
        return;
      }
    }
    report.add(
      where,
      `'${label}' = ${JSON.stringify(value)} has no counterpart in Tessera${type in SAME_AS_TESSERA ? ` (Tessera: ${SAME_AS_TESSERA[type]})` : ""}`,
    );
  });
  return options;
}
