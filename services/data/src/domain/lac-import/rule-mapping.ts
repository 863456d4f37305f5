/**
 * The export's `Rules` as Tessera rules (docs/rules.md), by `ruletype_ident`:
 * 1 sum, 2 count, 11 minimum, 12 maximum (rule_text1 the child list,
 * rule_text3 the summed attribute, rule_text2 the qualification), 3 formula,
 * 5 validation, 6 commit validation (rule_text1 the code, rule_text2 the
 * message), 7 event, 8 early event, 9 commit event (rule_text1 the code, `verbs`
 * the verbs it runs for), 4 parent copy (rule_text1 the role, rule_text2 the
 * parent's attribute), 13 managed parent (rule_text1 the role). JavaScript is
 * kept as written and runs in Tessera's sandbox; a rule whose code uses what the
 * sandbox lacks, an inactive rule, or a type Tessera has not, is left out and
 * reported.
 */
import type { RuleDefinition } from "../definition/project-definition.ts";
import { exportPath, type ImportReport } from "./import-report.ts";
import { type ColumnLookup, judgeCode, qualification, validationMessage, verbGuard } from "./lac-code.ts";
import type { LacRule } from "./lac-export.ts";
import type { MappedSchema, MappedTable } from "./schema-mapping.ts";

const AGGREGATES: Record<number, "sum" | "count" | "min" | "max"> = {
  1: "sum",
  2: "count",
  11: "min",
  12: "max",
};
const EVENTS: Record<number, "event" | "earlyEvent" | "commitEvent"> = {
  7: "event",
  8: "earlyEvent",
  9: "commitEvent",
};

export interface MappedRules {
  rules: RuleDefinition[];
  /** Where each rule came from (`$.Rules[i]`), by position in `rules`. */
  sources: string[];
  /** Some kept code uses LAC's `log`. */
  usesLog: boolean;
}

class Skip extends Error {}

export function mapRules(rules: LacRule[], schema: MappedSchema, report: ImportReport): MappedRules {
  const mapped: MappedRules = { rules: [], sources: [], usesLog: false };
  rules.forEach((rule, index) => {
    const where = exportPath("Rules", index);
    if (rule.active === false) {
      report.add(where, `rule '${ruleLabel(rule)}' is inactive in the export, so it is left out`);
      return;
    }
    const table = schema.table(rule.entity_name);
    if (!table) {
      report.add(where, `rule '${ruleLabel(rule)}': table '${rule.entity_name}' is not in the schema`);
      return;
    }
    try {
      const definition = mapRule(rule, table, schema, where, report, mapped);
      const name = (rule.name ?? "").trim();
      if (name !== "") definition.name = name.slice(0, 200);
      mapped.rules.push(definition);
      mapped.sources.push(where);
    } catch (err) {
      if (!(err instanceof Skip)) throw err;
      report.add(where, `rule '${ruleLabel(rule)}': ${err.message}`);
    }
  });
  return mapped;
}

function ruleLabel(rule: LacRule): string {
  const name =
    (rule.name ?? "").trim() || (rule.auto_name ?? "").split("\n")[0] || `type ${rule.ruletype_ident}`;
  return name.length > 80 ? `${name.slice(0, 77)}…` : name;
}

function mapRule(
  rule: LacRule,
  table: MappedTable,
  schema: MappedSchema,
  where: string,
  report: ImportReport,
  mapped: MappedRules,
): RuleDefinition {
  const lookup: ColumnLookup = (name) => schema.column(table, name);
  const column = () => {
    const own = rule.attribute_name ? lookup(rule.attribute_name) : undefined;
    if (!own) throw new Skip(`'${table.source.name}' has no column '${rule.attribute_name ?? ""}'`);
    return own;
  };
  const code = (text: string | null | undefined, what: string) => {
    if (rule.prop4 && rule.prop4.toLowerCase() !== "javascript")
      throw new Skip(`its ${what} is ${rule.prop4}, not JavaScript`);
    if (!text || text.trim() === "") throw new Skip(`its ${what} is empty`);
    const verdict = judgeCode(text);
    if (!verdict.ok) throw new Skip(verdict.reason);
    if (verdict.usesLog) mapped.usesLog = true;
    return text;
  };
  if (rule.predicate)
    report.add(
      `${where}.predicate`,
      `the rule's predicate '${rule.predicate}' has no counterpart; the rule runs always`,
    );
  if (rule.verbs && !(rule.ruletype_ident in EVENTS))
    report.add(
      `${where}.verbs`,
      `verbs '${rule.verbs}' apply to events only in Tessera; the rule runs for every verb`,
    );

  const aggregate = AGGREGATES[rule.ruletype_ident];
  if (aggregate) {
    const listName = rule.rule_text1 ?? "";
    const list = schema.childList(table, listName);
    if (!list)
      throw new Skip(
        `'${table.source.name}' has no list of children '${listName}' (a relationship of the schema or of the export's Relationships)`,
      );
    const childLookup: ColumnLookup = (name) => schema.column(list.child, name);
    const base = { table: table.name, column: column(), children: listName };
    let whereText: string | undefined;
    if (rule.rule_text2 && rule.rule_text2.trim() !== "") {
      const q = qualification(rule.rule_text2, childLookup);
      if (!q.ok) throw new Skip(q.reason);
      whereText = q.where;
    }
    const withWhere = whereText === undefined ? {} : { where: whereText };
    if (aggregate === "count") return { ...base, type: "count", ...withWhere };
    const of = childLookup(rule.rule_text3 ?? "");
    if (!of) throw new Skip(`the child '${list.child.source.name}' has no column '${rule.rule_text3 ?? ""}'`);
    return { ...base, type: aggregate, of, ...withWhere };
  }
  switch (rule.ruletype_ident) {
    case 3:
      return {
        table: table.name,
        type: "formula",
        column: column(),
        expression: code(rule.rule_text1, "expression"),
      };
    case 4: {
      const role = rule.rule_text1 ?? "";
      const rel = table.definition.parents?.[role];
      if (!rel) throw new Skip(`'${table.source.name}' has no relationship '${role}' to a parent`);
      const parent = schema.tables.get(rel.table) as MappedTable;
      const from = schema.column(parent, rule.rule_text2 ?? "");
      if (!from)
        throw new Skip(`the parent '${parent.source.name}' has no column '${rule.rule_text2 ?? ""}'`);
      return { table: table.name, type: "parentCopy", column: column(), parent: role, from };
    }
    case 5:
    case 6: {
      const expression = code(rule.rule_text1, "expression");
      const type = rule.ruletype_ident === 5 ? "validation" : "commitValidation";
      if (!rule.rule_text2) return { table: table.name, type, expression };
      const message = validationMessage(rule.rule_text2, lookup);
      if (message.formats.length > 0) {
        report.add(
          `${where}.rule_text2`,
          `number formats in the message (${message.formats.map((f) => `{${f}}`).join(", ")}) are dropped: Tessera inserts the value as it is`,
        );
      }
      if (message.unknown.length > 0) {
        report.add(
          `${where}.rule_text2`,
          `${message.unknown.map((u) => `{${u}}`).join(", ")} in the message names no column of '${table.source.name}'; kept as text`,
        );
      }
      return { table: table.name, type, expression, message: message.text.slice(0, 2000) };
    }
    case 13: {
      const role = rule.rule_text1 ?? "";
      if (!table.definition.parents?.[role])
        throw new Skip(`'${table.source.name}' has no relationship '${role}' to a parent`);
      if (rule.rule_text2 && rule.rule_text2.trim() !== "")
        report.add(
          `${where}.rule_text2`,
          "a managed parent's code has no counterpart; the parent is made from the key and its defaults",
        );
      return { table: table.name, type: "managedParent", parent: role };
    }
  }
  const event = EVENTS[rule.ruletype_ident];
  if (event) {
    const body = code(rule.rule_text1, "code");
    return { table: table.name, type: event, code: `${verbGuard(rule.verbs) ?? ""}${body}` };
  }
  throw new Skip(
    `rule type ${rule.ruletype_ident} has no counterpart in Tessera (sum, count, min, max, formula, parent copy, validation, commit validation, events, managed parent)`,
  );
}
