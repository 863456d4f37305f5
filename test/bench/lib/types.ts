/**
 * What a scenario is made of. A scenario prepares what it needs (data,
 * bench-only servers), then measures rows; a row may name a baseline row of the
 * same scenario, measured in the same run, and the report gives the ratio.
 * To add a scenario: write a module in test/bench/scenarios/ exporting a
 * Scenario, and list it in test/bench/scenarios/index.ts.
 */
import type { Fixtures } from "./fixtures.ts";
import type { Measurement, Target } from "./load.ts";
import type { ProbeResult } from "./probe.ts";
import type { NodeChild } from "./processes.ts";
import type { Stack } from "./stack.ts";

/** rps: ratio = row req/s ÷ baseline req/s (higher is better); p50: row p50 ÷ baseline p50 (lower is better). */
export type Compare = "rps" | "p50";

export interface Goal {
  op: ">=" | "<=";
  value: number;
}

export interface RowSpec {
  /** Short name, unique in its scenario (the report shows `<scenario>/<name>`). */
  name: string;
  /** One line: what is measured. */
  what: string;
  target: Target;
  connections: number;
  /** Name of a row of the same scenario, measured before this one. */
  baseline?: string;
  compare?: Compare;
  goal?: Goal;
}

export interface RowResult {
  scenario: string;
  row: string;
  what: string;
  target: string;
  connections: number;
  measurement: Measurement;
  baseline?: string;
  compare?: Compare;
  ratio?: number;
  goal?: Goal;
  /** undefined when the row has no goal. */
  met?: boolean;
  /**
   * CPU (user + system) the edge, the data service (with its sandbox processes), the auth
   * service, the store, Redis (when it runs on this machine: all its clients' work) and a peer
   * (Parse) while it runs spent while the row was measured, per request of the row (ms).
   */
  cpuMsPerRequest?: Record<string, number>;
  /** When requests failed under load: status and body of one more request sent afterwards. */
  failureSample?: string;
}

export interface Check {
  scenario: string;
  name: string;
  /** null: could not be checked. */
  ok: boolean | null;
  detail: string;
}

export interface PendingScenario {
  scenario: string;
  title: string;
  reason: string;
}

export interface BenchContext {
  stack: Stack;
  fixtures: Fixtures;
  log(line: string): void;
  /** Measures the rows in order (each after a warm-up that is not recorded). */
  measure(rows: RowSpec[]): Promise<void>;
  check(name: string, ok: boolean | null, detail: string): void;
  /** The scenario cannot run yet (its feature is not in the code): reported, not an error. */
  pending(reason: string): void;
  /** Store round trips of the data path, and the finds the floor replays (computed once per run). */
  probe(): Promise<ProbeResult>;
  /** The floor server (started once per run, after the probe). */
  floor(): Promise<NodeChild>;
  /** A value computed once per run and shared by scenarios (e.g. a project several scenarios use). */
  once<T>(key: string, make: () => Promise<T>): Promise<T>;
}

export interface Scenario {
  id: string;
  title: string;
  /** What it measures and against what, for the report and docs/benchmarks.md. */
  describe: string;
  run(ctx: BenchContext): Promise<void>;
}
