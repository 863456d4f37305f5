/**
 * Settling one request's run of the rules (logic-run.ts; docs/rules.md, "How
 * a request runs"), after propagation:
 *
 * 1. Validations and events of every changed row whose state was not yet
 *    settled, on its final state. Rows that events insert go back to
 *    propagation, then settling starts again.
 * 2. Commit validations and commit events over the final state, sent in the
 *    same sandbox call as the row validations and events; when events did
 *    insert rows, those answers are dropped and asked for again after the new
 *    rows' logic.
 */
import { type ApiError, errors } from "../../../../shared/errors.ts";
import { type CompiledRule, messagePlaceholders } from "../domain/model/rule-model.ts";
import type { RowDocument } from "../store/tenant-rows.ts";
import { toRuleRow } from "./parent-rows.ts";
import type { RuleRow, SettleTask } from "./program.ts";
import type { RuleCalls } from "./rule-calls.ts";
import type { RuleInserts } from "./rule-inserts.ts";
import type { RunState } from "./run-state.ts";
import { ruleFailure } from "./runtime.ts";
import type { TrackedRow } from "./tracked-rows.ts";

/** A row's settle task in the call, and the state the task ran on. */
interface PendingSettle {
  task: SettleTask;
  tracked: TrackedRow;
  /** `_ck` of that state (null: deleted). */
  checksum: string | null;
  state: RowDocument | null;
}

export class SettleStage {
  readonly #state: RunState;
  readonly #calls: RuleCalls;
  readonly #inserts: RuleInserts;
  /** Propagation of what rows inserted by events changed (LogicRun's waves). */
  readonly #propagate: () => Promise<void>;
  #settleRounds = 0;

  constructor(state: RunState, calls: RuleCalls, inserts: RuleInserts, propagate: () => Promise<void>) {
    this.#state = state;
    this.#calls = calls;
    this.#inserts = inserts;
    this.#propagate = propagate;
  }

  /**
   * Settling rounds: validations and events of every row whose state was not
   * yet settled. The commit validations and commit events are sent in the same
   * sandbox call, on the same (final, unless events insert rows) state; when
   * events did insert rows, those answers are dropped and asked for again after
   * the new rows' logic.
   */
  async settleAndCommit(): Promise<void> {
    const limits = this.#state.limits;
    for (;;) {
      const row = await this.#settleTasks("row");
      const commit = await this.#settleTasks("commit");
      if (row.length + commit.length === 0) return;
      // A round that only resumes events (each resumed one inserted a row) does not count.
      const fresh = row.some(({ task }) => task.given === undefined);
      if (fresh && ++this.#settleRounds > limits.maxSettleRounds) {
        throw ruleFailure(
          `The rules did not settle after ${limits.maxSettleRounds} rounds of events inserting rows`,
        );
      }
      const answers = await this.#calls.settle(
        row.map(({ task }) => task),
        commit.map(({ task }) => task),
      );
      let inserted = false;
      for (const [{ task, tracked, checksum, state }, result] of answered(row, answers.row)) {
        for (const fired of result.fired) this.#state.noteRule(tracked, this.#calls.rule(fired));
        if (result.failed !== undefined)
          throw this.#validationFailed(this.#calls.rule(result.failed), task.row);
        const planned: TrackedRow[] = [];
        for (const insert of result.inserts) {
          planned.push(await this.#inserts.insertFromRule(insert.rule, insert.table, insert.values));
          inserted = true;
        }
        if (result.incomplete) {
          // Its code read a row it inserted: store the rows, then run it again (not settled yet).
          tracked.given.push(...planned);
          continue;
        }
        tracked.given = [];
        tracked.settled = checksum;
        tracked.settledRow = state;
      }
      if (inserted) {
        await this.#propagate();
        continue;
      }
      for (const [{ task, tracked }, result] of answered(commit, answers.commit)) {
        if (result.error) throw this.#calls.taskError(result.error);
        for (const fired of result.fired) this.#state.noteRule(tracked, this.#calls.rule(fired));
        if (result.failed !== undefined) {
          throw this.#validationFailed(this.#calls.rule(result.failed), task.row);
        }
      }
      return;
    }
  }

  /** Validations and events (`row`) or commit validations, then commit events (`commit`), of changed rows. */
  async #settleTasks(phase: "row" | "commit"): Promise<PendingSettle[]> {
    const pending: PendingSettle[] = [];
    const parts = phase === "row" ? [undefined] : (["validations", "events"] as const);
    for (const part of parts) {
      for (const change of this.#state.plan.changes) {
        const logic = this.#state.logicOf(change.table.name);
        const tracked = this.#state.trackedRows.track(
          logic,
          change.id,
          change.resource,
          change.before,
          change.verb,
        );
        const checksum = change.after ? change.after._ck : null;
        if (phase === "row" && tracked.settled === checksum) continue;
        const validations =
          phase === "row" ? logic.validations : part === "validations" ? logic.commitValidations : [];
        const events = phase === "row" ? logic.events : part === "events" ? logic.commitEvents : [];
        if ((change.after ? validations.length : 0) + events.length === 0) {
          if (phase === "row") {
            tracked.settled = checksum;
            tracked.settledRow = change.after;
          }
          continue;
        }
        const state = change.after ?? change.before;
        if (!state) continue;
        const roles = phase === "row" ? logic.settleRoles : logic.commitRoles;
        const old = phase === "row" && tracked.settled !== undefined ? tracked.settledRow : tracked.before;
        const task: SettleTask = {
          t: "settle",
          table: logic.name,
          row: this.#calls.ruleRow(logic, state, roles),
          oldRow: old ? toRuleRow(logic.table, old) : null,
          verb:
            tracked.settled === undefined || phase === "commit"
              ? change.verb
              : change.after
                ? "UPDATE"
                : "DELETE",
          initialVerb: tracked.initialVerb,
          deleted: !change.after,
          phase,
          part,
          given:
            phase === "row" && tracked.given.length > 0 ? await this.#givenRows(tracked.given) : undefined,
        };
        pending.push({ task, tracked, checksum, state: change.after });
      }
    }
    return pending;
  }

  /** Rows events inserted, as the request has stored them (key, defaults, formulas). */
  async #givenRows(rows: TrackedRow[]): Promise<NonNullable<SettleTask["given"]>> {
    const out: NonNullable<SettleTask["given"]> = [];
    for (const tracked of rows) {
      const doc = await this.#state.plan.current(tracked.logic.table, tracked.id);
      out.push({ table: tracked.logic.name, row: doc ? toRuleRow(tracked.logic.table, doc) : null });
    }
    return out;
  }

  #validationFailed(rule: CompiledRule, row: RuleRow): ApiError {
    const defined = rule.type === "validation" || rule.type === "commitValidation" ? rule.message : undefined;
    const text = defined ?? `Validation '${rule.name}' failed`;
    const message = text.replace(messagePlaceholders(), (whole, name: string) => {
      if (!(name in row)) return whole;
      const value = row[name];
      return value === null || value === undefined
        ? "null"
        : typeof value === "object"
          ? JSON.stringify(value)
          : String(value);
    });
    return errors.validationFailed(message);
  }
}

/**
 * Each pending task with its answer, in order. The answers stop after the first failure (a rule
 * error or a validation that failed), so tasks after it have none.
 */
function answered<R>(pending: PendingSettle[], answers: R[]): [PendingSettle, R][] {
  return answers.flatMap((answer, i) => {
    const task = pending[i];
    return task ? [[task, answer]] : [];
  });
}
