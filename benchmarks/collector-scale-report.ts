/**
 * The tables benchmarks/collector-scale.ts prints from its cells: per tree and
 * load regime the runs/s, CPU per 1,000 runs and the ratio of CPU per run to
 * one collector's in the same regime; the CPU split by process; the issue's
 * target line (two collectors at 600 requests/s of 10 runs); and, with a
 * baseline, this tree's CPU per run against it.
 */
import { median, spread } from "./stats.js";
import type { WaitCounts } from "./pg-activity.js";

/** One measurement of one cell: what each part used per 1,000 runs (CPU ms) and per request (context switches). */
export interface Sample {
  runsps: number;
  requestsps: number;
  /** Requests/s the load generator was asked for (0: as fast as answered). */
  offered: number;
  p50: number;
  p99: number;
  failures: number;
  /** Failures answered with a 5xx status. */
  fivexx: number;
  missing: number;
  collectors: number[];
  idleCollectors: number;
  backends: number;
  background: number;
  exited: number;
  loadgen: number;
  /** The load generator's CPU per request, µs. */
  loadgenPerRequest: number;
  machine: number;
  /** Context switches per request: collectors (summed), backends, load generator; voluntary and involuntary. */
  switches: { collectors: [number, number]; backends: [number, number]; loadgen: [number, number] };
  backendCount: number;
  backendsStarted: number;
  /** PostgreSQL's background processes, CPU ms per 1,000 runs by process title. */
  backgroundByTitle: Record<string, number>;
  waits?: WaitCounts;
  statements?: string;
}

/** Samples by `${tree}|${mode}|${batch}/${collectors}`. */
export type Cells = Map<string, Sample[]>;

export interface ReportShape {
  trees: string[];
  modes: ("max" | number)[];
  batches: number[];
  collectors: number[];
  heading: string;
  idleCollectors: boolean;
  baseline: string;
}

const f = (v: number, d = 0) => v.toFixed(d);
const med = (ss: Sample[], pick: (s: Sample) => number, d = 0) => f(median(ss.map(pick)), d);
const collectorsSum = (s: Sample) => s.collectors.reduce((a, b) => a + b, 0);
/** What the target counts: the collectors and PostgreSQL, per run. */
const perRun = (s: Sample) => collectorsSum(s) + s.backends + s.background + s.exited;
const modeName = (mode: "max" | number) =>
  mode === "max" ? "as fast as answered (each cell at its own saturation)" : `offered ${mode} runs/s (paced, the same for every cell)`;

export function printReport(cells: Cells, shape: ReportShape): void {
  const { batches, collectors } = shape;
  const cell = (tree: string, mode: "max" | number, batch: number, n: number) => cells.get(`${tree}|${mode}|${batch}/${n}`);

  function main(tree: string, mode: "max" | number): void {
    console.log(`\ncollectors side by side on one PostgreSQL (${tree}), load ${modeName(mode)}: ${shape.heading}, medians (range)`);
    console.log(
      "batch collectors  requests/s  runs/s  collector-CPU-ms/1k-runs (per collector)  postgres-CPU-ms/1k  machine  p50-ms  p99-ms  CPU/run-vs-1  failures (5xx)  missing",
    );
    for (const batch of batches) {
      const one = cell(tree, mode, batch, collectors[0]!);
      const onePerRun = one ? median(one.map(perRun)) : NaN;
      for (const n of collectors) {
        const ss = cell(tree, mode, batch, n)!;
        const saturated = mode !== "max" && median(ss.map((s) => s.requestsps / s.offered)) < 0.97;
        console.log(
          [
            batch,
            n,
            med(ss, (s) => s.requestsps) + (saturated ? " (below offered: saturated)" : ""),
            spread(
              ss.map((s) => s.runsps),
              0,
            ),
            `${med(ss, collectorsSum)} (${med(ss, (s) => collectorsSum(s) / n)})`,
            med(ss, (s) => s.backends + s.background + s.exited),
            med(ss, (s) => s.machine),
            med(ss, (s) => s.p50, 1),
            med(ss, (s) => s.p99, 1),
            one
              ? spread(
                  ss.map((s) => perRun(s) / onePerRun),
                  2,
                  "x",
                )
              : "-",
            `${ss.reduce((a, s) => a + s.failures, 0)} (${ss.reduce((a, s) => a + s.fivexx, 0)})`,
            ss.reduce((a, s) => a + s.missing, 0),
          ].join("  "),
        );
      }
    }
  }

  function split(tree: string, mode: "max" | number): void {
    console.log(
      `\nCPU ms per 1,000 runs by process (${tree}, ${mode === "max" ? "max" : `${mode} runs/s`}, medians); context switches per request, voluntary/involuntary`,
    );
    console.log(
      "batch collectors  each-collector  pg-backends (n, +started)  pg-background  pg-exited  load-gen  ours-total  machine  | switches: collectors  pg-backends  load-gen" +
        (shape.idleCollectors ? "  | idle collectors" : ""),
    );
    for (const batch of batches) {
      for (const n of collectors) {
        const ss = cell(tree, mode, batch, n)!;
        const sw = (pick: (s: Sample) => [number, number]) => `${med(ss, (s) => pick(s)[0], 1)}/${med(ss, (s) => pick(s)[1], 1)}`;
        console.log(
          [
            batch,
            n,
            Array.from({ length: n }, (_, i) => med(ss, (s) => s.collectors[i]!)).join("+"),
            `${med(ss, (s) => s.backends)} (${med(ss, (s) => s.backendCount)}, +${med(ss, (s) => s.backendsStarted)})`,
            med(ss, (s) => s.background),
            med(ss, (s) => s.exited),
            med(ss, (s) => s.loadgen),
            med(ss, (s) => perRun(s) + s.loadgen),
            med(ss, (s) => s.machine),
            "|",
            sw((s) => s.switches.collectors),
            sw((s) => s.switches.backends),
            sw((s) => s.switches.loadgen),
            ...(shape.idleCollectors ? ["|", med(ss, (s) => s.idleCollectors, 1)] : []),
          ].join("  "),
        );
      }
    }
    if (mode !== "max") return;
    console.log("\nPostgreSQL's background processes, CPU ms per 1,000 runs (max, last repetition):");
    for (const batch of batches) {
      for (const n of collectors) {
        const last = cell(tree, mode, batch, n)!.at(-1)!;
        const top = Object.entries(last.backgroundByTitle)
          .filter(([, ms]) => ms >= 1)
          .sort((a, b) => b[1] - a[1])
          .map(([t, ms]) => `${t} ${f(ms)}`);
        console.log(`  batch ${batch}, ${n} collector(s): ${top.join(", ") || "-"}; exited children ${f(last.exited)}`);
      }
    }
  }

  for (const tree of shape.trees) {
    for (const mode of shape.modes) main(tree, mode);
    for (const mode of shape.modes) split(tree, mode);
  }

  // The issue's throughput target: two collectors take 600 requests/s of 10 runs with no 5xx.
  for (const tree of shape.trees) {
    const ss = cell(tree, 6000, 10, 2);
    if (!ss) continue;
    const achieved = median(ss.map((s) => s.requestsps));
    const fivexx = ss.reduce((a, s) => a + s.fivexx, 0);
    console.log(
      `\ntarget, two collectors at 600 requests/s of 10 runs (${tree}): ${spread(
        ss.map((s) => s.requestsps),
        0,
      )} requests/s answered 202, ${fivexx} 5xx, p99 ${med(ss, (s) => s.p99, 1)} ms: ${achieved >= 0.97 * 600 && fivexx === 0 ? "met" : "NOT met"}`,
    );
  }

  for (const tree of shape.trees) {
    for (const mode of shape.modes) {
      for (const batch of batches) {
        for (const n of collectors) {
          const last = cell(tree, mode, batch, n)?.at(-1);
          if (!last?.waits && !last?.statements) continue;
          console.log(`\n${tree}, batch ${batch}, ${n} collector(s), ${mode === "max" ? "max" : `${mode} runs/s`}, last repetition:`);
          if (last.waits) {
            const total = Object.values(last.waits).reduce((a, b) => a + b, 0) || 1;
            const top = Object.entries(last.waits)
              .sort((a, b) => b[1] - a[1])
              .slice(0, 8)
              .map(([k, v]) => `${k} ${f((v / total) * 100)}%`);
            console.log(`  collectors' backends, sampled: ${top.join(", ")}`);
          }
          if (last.statements) console.log(last.statements);
        }
      }
    }
  }

  if (shape.trees.length < 2) return;
  const [ours, base] = [shape.trees[0]!, shape.trees[1]!];
  for (const mode of shape.modes) {
    console.log(
      `\nThis tree against the baseline (${shape.baseline}), ${modeName(mode)}, CPU ms per 1,000 runs, medians: this / baseline (ratio)`,
    );
    console.log("batch collectors  requests/s  collectors  pg-backends  ours-total  machine  | CPU/run-vs-1: this / baseline");
    for (const batch of batches) {
      const onePerRun = (t: string) => median(cell(t, mode, batch, collectors[0]!)!.map(perRun));
      for (const n of collectors) {
        const [a, b] = [cell(ours, mode, batch, n)!, cell(base, mode, batch, n)!];
        const pair = (pick: (s: Sample) => number) => {
          const [x, y] = [median(a.map(pick)), median(b.map(pick))];
          return `${f(x)} / ${f(y)} (${f(x / y, 2)}x)`;
        };
        console.log(
          [
            batch,
            n,
            `${med(a, (s) => s.requestsps)} / ${med(b, (s) => s.requestsps)}`,
            pair(collectorsSum),
            pair((s) => s.backends),
            pair((s) => perRun(s) + s.loadgen),
            pair((s) => s.machine),
            "|",
            `${f(median(a.map(perRun)) / onePerRun(ours), 2)}x / ${f(median(b.map(perRun)) / onePerRun(base), 2)}x`,
          ].join("  "),
        );
      }
    }
  }
}
