/**
 * What changed between two parsed project definitions, as a structure that is
 * easy to render (a web console, an audit listing) and a one-line summary.
 *
 * Every kind of named entry (tables, columns, relationships, resources, roles,
 * grants, rules, libraries, API versions) is diffed the same way:
 * `{added: [names], removed: [names], changed: {name: what changed}}`, with
 * empty parts left out. A changed field is `{before, after}`; a side is absent
 * when the field was not set there. Secrets are never shown: secret fields
 * (definition-secrets.ts) are compared masked, of a provider's `config` only
 * the keys that were added, removed or changed are named, and of library code
 * only its size and SHA-256 digest.
 *
 * Rules have no required name, so they are matched like this: a named rule by
 * its name; an unnamed rule that derives a column by its type, table and
 * column (`sum customer.balance`) and an unnamed managedParent by its table
 * and parent role (`managedParent emp.dept`), which are unique in a valid
 * definition; other unnamed rules (validations, events) by type and table,
 * identical rules first (moving a rule is no change), then in order. A rule is
 * shown under the name the rules use in messages (`ruleName`), numbered by
 * its position in the definition it is in (the new one for added and changed
 * rules, the old one for removed rules).
 */
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { maskSecretPair } from "../definition/definition-secrets.ts";
import type {
  AuthenticationDefinition,
  CustomResourceDefinition,
  EventDefinition,
  ProjectDefinition,
  ResourceDefinition,
  RoleDefinition,
  RuleDefinition,
  TableDefinition,
} from "../definition/project-definition.ts";
import { ruleName } from "../model/rule-model.ts";
import { isJavaScriptResource } from "../model/script-model.ts";
import { type TableIndex, tableIndexes } from "../model/table-indexes.ts";

/** A field that changed; a side is absent when the field was not set there. */
export interface ValueChange<T = unknown> {
  before?: T;
  after?: T;
}

/** Named entries of one kind: which were added, removed, and what changed in the others. */
export interface EntryChanges<C> {
  added?: string[];
  removed?: string[];
  changed?: Record<string, C>;
}

/** Keys whose values are never shown (they may be secrets). */
export interface KeyChanges {
  added?: string[];
  removed?: string[];
  changed?: string[];
}

/** Code is not shown: its size in bytes (UTF-8) and its SHA-256, before and after. */
export interface CodeDigest {
  bytes: number;
  sha256: string;
}

export interface CodeChange {
  before: CodeDigest;
  after: CodeDigest;
}

/** Changed fields of a column (`type`, `required`, `default`…), a relationship, a grant, or a rule. */
export type FieldChanges = Record<string, ValueChange>;

export interface TableChange {
  key?: ValueChange<string[]>;
  columns?: EntryChanges<FieldChanges>;
  /** Relationships to parent tables, by role. */
  parents?: EntryChanges<FieldChanges>;
  /** The table's store indexes (its own and the key's and foreign keys'), by name. */
  indexes?: EntryChanges<FieldChanges>;
}

export interface ResourceChange {
  /** `table` or `javascript`. */
  type?: ValueChange<string>;
  table?: ValueChange<string>;
  via?: ValueChange<string>;
  /** Whether the resource shows every column (no `attributes`). */
  allColumns?: ValueChange<boolean>;
  /** Attributes by their name on the wire; a changed one is the column it maps to. */
  attributes?: EntryChanges<ValueChange<string>>;
  filter?: ValueChange<string>;
  order?: ValueChange<string>;
  subresources?: EntryChanges<ResourceChange>;
  /** A JavaScript resource's code (digests only). */
  code?: CodeChange;
  /** A JavaScript resource's roles. */
  roles?: ValueChange<string[]>;
  description?: ValueChange<string>;
}

/** A request or response event: its type and code (digests only). */
export interface EventChange {
  type?: ValueChange<string>;
  code?: CodeChange;
}

export interface VersionChange {
  resources?: EntryChanges<ResourceChange>;
  /** Events by name, or by type and position when unnamed (`request #1`). */
  events?: EntryChanges<EventChange>;
  libraries?: ValueChange<string[]>;
}

export interface RoleChange {
  description?: ValueChange<string>;
  /** Grants by table name (or `*`): `access`, `rowFilter`, `columns`. */
  tables?: EntryChanges<FieldChanges>;
}

export interface AuthenticationChange {
  /** `provider`, `keyLifetimeSeconds`, `library`, `createFunction`, … */
  fields?: FieldChanges;
  config?: KeyChanges;
}

export interface DefinitionDiff {
  description?: ValueChange<string>;
  tables?: EntryChanges<TableChange>;
  apiVersions?: EntryChanges<VersionChange>;
  roles?: EntryChanges<RoleChange>;
  rules?: EntryChanges<FieldChanges>;
  authentication?: AuthenticationChange;
  libraries?: EntryChanges<CodeChange>;
  /** One line for listings, e.g. `tables +1 ~2, roles ~1, rules -1`; `no changes` when there are none. */
  summary: string;
}

export function diffDefinitions(stored: ProjectDefinition, sent: ProjectDefinition): DefinitionDiff {
  // Secret fields compare as masks: which changed shows, never a value (definition-secrets.ts).
  const [before, after] = maskSecretPair(stored, sent);
  const sections = pruned({
    description: valueChange(before.description, after.description),
    tables: entryChanges(before.tables, after.tables, tableChange),
    apiVersions: entryChanges(before.apiVersions, after.apiVersions, (b, a) =>
      pruned({
        resources: entryChanges(b.resources, a.resources, customResourceChange),
        events: entryChanges(labelledEvents(b.events), labelledEvents(a.events), eventChange),
        libraries: valueChange(b.libraries, a.libraries),
      }),
    ),
    roles: entryChanges(before.roles, after.roles, roleChange),
    rules: ruleChanges(before.rules, after.rules),
    authentication: authenticationChange(before.authentication, after.authentication),
    libraries: entryChanges(before.libraries, after.libraries, (b, a) => codeChange(b.code, a.code)),
  });
  return { ...sections, summary: summaryLine(sections ?? {}) };
}

/** The object without its undefined, empty-array and empty-object fields; undefined when nothing is left. */
function pruned<T extends object>(value: T): T | undefined {
  const entries = Object.entries(value).filter(
    ([, v]) =>
      v !== undefined &&
      !(Array.isArray(v) && v.length === 0) &&
      !(typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0),
  );
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as T);
}

function valueChange<T>(before: T | undefined, after: T | undefined): ValueChange<T> | undefined {
  if (isDeepStrictEqual(before, after)) return undefined;
  const change: ValueChange<T> = {};
  if (before !== undefined) change.before = before;
  if (after !== undefined) change.after = after;
  return change;
}

/** Every field of either object whose value differs. */
function fieldChanges(
  before: object,
  after: object,
  except: readonly string[] = [],
): FieldChanges | undefined {
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  const changes: FieldChanges = {};
  for (const field of new Set([...Object.keys(b), ...Object.keys(a)])) {
    if (except.includes(field)) continue;
    const change = valueChange(b[field], a[field]);
    if (change) changes[field] = change;
  }
  return pruned(changes);
}

function entryChanges<D, C>(
  before: Record<string, D> | undefined,
  after: Record<string, D> | undefined,
  change: (before: D, after: D) => C | undefined,
): EntryChanges<C> | undefined {
  const b = before ?? {};
  const a = after ?? {};
  const changed: Record<string, C> = {};
  for (const [name, value] of Object.entries(a)) {
    if (!Object.hasOwn(b, name)) continue;
    const c = change(b[name] as D, value);
    if (c !== undefined) changed[name] = c;
  }
  return pruned({
    added: Object.keys(a).filter((name) => !Object.hasOwn(b, name)),
    removed: Object.keys(b).filter((name) => !Object.hasOwn(a, name)),
    changed,
  });
}

function tableChange(before: TableDefinition, after: TableDefinition): TableChange | undefined {
  return pruned({
    key: valueChange(before.key, after.key),
    columns: entryChanges(before.columns, after.columns, (b, a) => fieldChanges(b, a)),
    parents: entryChanges(before.parents, after.parents, (b, a) => fieldChanges(b, a)),
    indexes: entryChanges(indexesByName(before), indexesByName(after), (b, a) => fieldChanges(b, a)),
  });
}

function indexesByName(table: TableDefinition): Record<string, Omit<TableIndex, "name">> {
  return Object.fromEntries(tableIndexes(table).map(({ name, ...index }) => [name, index]));
}

function codeChange(before: string, after: string): CodeChange | undefined {
  return before === after ? undefined : { before: digest(before), after: digest(after) };
}

function customResourceChange(
  before: CustomResourceDefinition,
  after: CustomResourceDefinition,
): ResourceChange | undefined {
  if (!isJavaScriptResource(before) && !isJavaScriptResource(after)) return resourceChange(before, after);
  const kind = (r: CustomResourceDefinition) => r.type ?? "table";
  if (!isJavaScriptResource(before) || !isJavaScriptResource(after)) {
    return { type: { before: kind(before), after: kind(after) } };
  }
  return pruned({
    code: codeChange(before.code, after.code),
    roles: valueChange(before.roles, after.roles),
    description: valueChange(before.description, after.description),
  });
}

/** Events by name, or by type and position when unnamed (`request #1`). */
function labelledEvents(events: EventDefinition[] | undefined): Record<string, EventDefinition> {
  return Object.fromEntries(
    (events ?? []).map((event, i) => [event.name ?? `${event.type} #${i + 1}`, event]),
  );
}

function eventChange(before: EventDefinition, after: EventDefinition): EventChange | undefined {
  return pruned({ type: valueChange(before.type, after.type), code: codeChange(before.code, after.code) });
}

function resourceChange(
  before: ResourceDefinition & { via?: string },
  after: ResourceDefinition & { via?: string },
): ResourceChange | undefined {
  const allBefore = before.attributes === undefined;
  const allAfter = after.attributes === undefined;
  return pruned({
    table: valueChange(before.table, after.table),
    via: valueChange(before.via, after.via),
    allColumns: allBefore === allAfter ? undefined : { before: allBefore, after: allAfter },
    attributes: entryChanges(before.attributes, after.attributes, valueChange),
    filter: valueChange(before.filter, after.filter),
    order: valueChange(before.order, after.order),
    subresources: entryChanges(before.subresources, after.subresources, resourceChange),
  });
}

function roleChange(before: RoleDefinition, after: RoleDefinition): RoleChange | undefined {
  return pruned({
    description: valueChange(before.description, after.description),
    tables: entryChanges(before.tables, after.tables, (b, a) => fieldChanges(b, a)),
  });
}

function authenticationChange(
  before: AuthenticationDefinition,
  after: AuthenticationDefinition,
): AuthenticationChange | undefined {
  const b = before.config ?? {};
  const a = after.config ?? {};
  return pruned({
    fields: fieldChanges(before, after, ["config"]),
    config: pruned({
      added: Object.keys(a).filter((key) => !Object.hasOwn(b, key)),
      removed: Object.keys(b).filter((key) => !Object.hasOwn(a, key)),
      changed: Object.keys(a).filter((key) => Object.hasOwn(b, key) && !isDeepStrictEqual(a[key], b[key])),
    }),
  });
}

function digest(code: string): CodeDigest {
  return { bytes: Buffer.byteLength(code, "utf8"), sha256: createHash("sha256").update(code).digest("hex") };
}

interface PlacedRule {
  rule: RuleDefinition;
  index: number;
  label: string;
}

/** Rules with an identity (a name, or the column or parent role they are about), and the others by type and table. */
function placeRules(rules: readonly RuleDefinition[]): {
  identified: Map<string, PlacedRule>;
  unnamed: Map<string, PlacedRule[]>;
} {
  const identified = new Map<string, PlacedRule>();
  const unnamed = new Map<string, PlacedRule[]>();
  const seen = new Map<string, number>();
  rules.forEach((rule, index) => {
    const label = ruleName(rule, index);
    if (rule.name || "column" in rule || rule.type === "managedParent") {
      const identity = rule.name ? `name ${rule.name}` : `rule ${label}`;
      const occurrence = (seen.get(identity) ?? 0) + 1;
      seen.set(identity, occurrence);
      identified.set(`${identity} #${occurrence}`, {
        rule,
        index,
        label: occurrence === 1 ? label : `${label} (${occurrence})`,
      });
    } else {
      const group = `${rule.type} ${rule.table}`;
      unnamed.set(group, [...(unnamed.get(group) ?? []), { rule, index, label }]);
    }
  });
  return { identified, unnamed };
}

function ruleChanges(
  before: readonly RuleDefinition[],
  after: readonly RuleDefinition[],
): EntryChanges<FieldChanges> | undefined {
  const b = placeRules(before);
  const a = placeRules(after);
  const pairs: [PlacedRule, PlacedRule][] = [];
  const added: PlacedRule[] = [];
  const removed: PlacedRule[] = [];
  for (const [identity, rule] of a.identified) {
    const old = b.identified.get(identity);
    if (old) pairs.push([old, rule]);
    else added.push(rule);
  }
  for (const [identity, rule] of b.identified) if (!a.identified.has(identity)) removed.push(rule);
  for (const group of new Set([...b.unnamed.keys(), ...a.unnamed.keys()])) {
    const olds = [...(b.unnamed.get(group) ?? [])];
    const news: PlacedRule[] = [];
    for (const rule of a.unnamed.get(group) ?? []) {
      const same = olds.findIndex((old) => isDeepStrictEqual(old.rule, rule.rule));
      if (same >= 0) olds.splice(same, 1);
      else news.push(rule);
    }
    news.forEach((rule, i) => {
      const old = olds[i];
      if (old) pairs.push([old, rule]);
      else added.push(rule);
    });
    removed.push(...olds.slice(news.length));
  }
  const byIndex = (x: PlacedRule, y: PlacedRule) => x.index - y.index;
  const changed: Record<string, FieldChanges> = {};
  for (const [old, rule] of pairs.sort(([, x], [, y]) => byIndex(x, y))) {
    const change = fieldChanges(old.rule, rule.rule);
    if (change) changed[rule.label] = change;
  }
  return pruned({
    added: added.sort(byIndex).map((r) => r.label),
    removed: removed.sort(byIndex).map((r) => r.label),
    changed,
  });
}

/** `+added ~changed -removed`, without the zero counts. */
function counts(added: number, changed: number, removed: number): string {
  return [added ? `+${added}` : "", changed ? `~${changed}` : "", removed ? `-${removed}` : ""]
    .filter((part) => part !== "")
    .join(" ");
}

function entryCounts(changes: EntryChanges<unknown> | undefined): string {
  return counts(
    changes?.added?.length ?? 0,
    Object.keys(changes?.changed ?? {}).length,
    changes?.removed?.length ?? 0,
  );
}

function summaryLine(diff: Omit<DefinitionDiff, "summary">): string {
  const versions = diff.apiVersions;
  const changedVersions = Object.values(versions?.changed ?? {});
  const total = (entries: (EntryChanges<unknown> | undefined)[]) =>
    counts(
      entries.reduce((n, e) => n + (e?.added?.length ?? 0), 0),
      entries.reduce((n, e) => n + Object.keys(e?.changed ?? {}).length, 0),
      entries.reduce((n, e) => n + (e?.removed?.length ?? 0), 0),
    );
  const parts: [string, string][] = [
    ["tables", entryCounts(diff.tables)],
    ["apiVersions", counts(versions?.added?.length ?? 0, 0, versions?.removed?.length ?? 0)],
    ["resources", total(changedVersions.map((v) => v.resources))],
    ["events", total(changedVersions.map((v) => v.events))],
    ["roles", entryCounts(diff.roles)],
    ["rules", entryCounts(diff.rules)],
    ["authentication", diff.authentication ? "changed" : ""],
    ["libraries", entryCounts(diff.libraries)],
    ["description", diff.description ? "changed" : ""],
  ];
  const line = parts
    .filter(([, text]) => text !== "")
    .map(([name, text]) => `${name} ${text}`)
    .join(", ");
  return line || "no changes";
}
