/**
 * Reads a V8 .cpuprofile (written by `node --cpu-prof`) and returns the frames
 * with the most self time. A profile holds a tree of nodes (each with a
 * callFrame), the sampled node id of every tick (`samples`) and the time since
 * the previous tick (`timeDeltas`, microseconds). The time of sample i is
 * timeDeltas[i + 1] (the interval until the next tick); self time of a frame is
 * the sum over the samples of every node with that frame.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  frame: string;
  selfMs: number;
  /** Share of the profile's time outside (idle). */
  percent: number;
}

export function topSelfFrames(
  file: string,
  count: number,
  root: string,
): { frames: Frame[]; busyMs: number } {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const frameOf = new Map<number, string>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    let where = url;
    if (where.startsWith("file://")) where = path.relative(root, new URL(where).pathname);
    const name = functionName || "(anonymous)";
    // lineNumber is 0-based in profiles.
    frameOf.set(node.id, where ? `${name} ${where}:${lineNumber + 1}` : name);
  }
  const self = new Map<string, number>();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    const frame = frameOf.get(samples[i]!) ?? "?";
    self.set(frame, (self.get(frame) ?? 0) + (timeDeltas[i + 1] ?? 0));
  }
  self.delete("(idle)");
  const busy = [...self.values()].reduce((a, b) => a + b, 0);
  const frames = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, percent: busy ? (100 * us) / busy : 0 }));
  return { frames, busyMs: busy / 1000 };
}
