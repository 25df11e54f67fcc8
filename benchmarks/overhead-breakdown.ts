/**
 * Where a traced call's added time goes, for benchmarks/overhead.ts: blocks of
 * calls run under V8's sampling CPU profiler (node:inspector, in this process),
 * and each sample's time is charged to the stage its function belongs to, by
 * the source file it is in (a bundled build's source maps say which): the wrapper's hand-over (tracing/), normalizing request
 * and response (adapters/), building the run (run/llm, serialize), ids and
 * times (run/ids, run/tree), the safe copy (run/safe), AsyncLocalStorage,
 * sampling and masking (ingest/privacy), queueing (ingest/client, ops, queue,
 * pump), encoding (ingest/multipart, encoded-run), token estimation (tokens/),
 * delivery (ingest/http-sink, delivery, node's http client, zlib), and the
 * garbage collector. The same blocks of the unwrapped client are profiled
 * alike, so a stage both share (the SDK, fetch, GC) shows what tracing added
 * to it. The profiler slows everything it samples a little, alike for both.
 */
import { Session } from "node:inspector/promises";
import { sourceOf } from "./source-of.js";

interface ProfileNode {
  id: number;
  callFrame: { url: string; functionName: string; lineNumber: number; columnNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

/**
 * The functions of a wrapped stream's iterator (src/tracing/llm.ts wrapIterator) that run once per chunk, by
 * their source names (the bundler may suffix a digit to a name another module also uses).
 */
const CHUNK_STEP = new Set(["next", "fold", "onStep", "onSideStep", "onError", "onSideError"]);

/** Stages in the order they are printed; the first whose test matches a sample's file takes it. */
const STAGES: [stage: string, test: (url: string, fn: string) => boolean][] = [
  // A streamed chunk's own step in the wrapper (the iterator's next and the reaction that folds the chunk), apart
  // from the rest of tracing/, which runs once per call or stream: the one grows with the chunks, the other does not.
  [
    "hand-over, per chunk (tracing/llm: next, fold)",
    (u, f) => u.includes("/dist/src/tracing/llm.") && CHUNK_STEP.has(f.replace(/\d+$/, "")),
  ],
  ["hand-over (tracing/)", (u) => u.includes("/dist/src/tracing/")],
  ["normalize (adapters/)", (u) => u.includes("/dist/adapters/")],
  ["run building (run/llm, serialize, format/)", (u) => /\/dist\/src\/(run\/(llm|serialize)|format\/)/.test(u)],
  ["ids and times (run/ids, run/tree)", (u) => /\/dist\/src\/run\/(ids|tree)\.js/.test(u)],
  ["safe copy (run/safe)", (u) => u.includes("/dist/src/run/safe.js")],
  ["context (AsyncLocalStorage)", (u) => /node:(async_hooks|internal\/async_local_storage|internal\/async_hooks)/.test(u)],
  ["sampling, masking (ingest/privacy)", (u) => u.includes("/dist/src/ingest/privacy.js")],
  ["encoding (ingest/multipart, encoded-run)", (u) => /\/dist\/src\/ingest\/(multipart|encoded-run)\.js/.test(u)],
  [
    "delivery (ingest/http-sink, delivery, node:http, zlib)",
    (u) =>
      /\/dist\/src\/ingest\/(http-sink|delivery|sink|deadletter|spool)/.test(u) ||
      /^node:(_http|http|https|zlib|internal\/http|internal\/streams\/|net|stream)/.test(u),
  ],
  ["queueing (ingest/client, ops, queue, pump)", (u) => u.includes("/dist/src/ingest/")],
  ["token estimation (tokens/)", (u) => u.includes("/dist/src/tokens/")],
  ["other tracepipe", (u) => u.includes("/dist/")],
  ["langsmith (the peer's tracer)", (u) => u.includes("/node_modules/langsmith/")],
  ["openai SDK", (u) => u.includes("/node_modules/openai/")],
  ["fetch (undici)", (u) => u.includes("undici")],
  ["garbage collector", (_u, f) => f === "(garbage collector)"],
  ["other (node, V8, benchmark)", (_u, f) => f !== "(idle)" && f !== "(program)"],
];
export const STAGE_NAMES = STAGES.map(([s]) => s);
const INTERVAL_US = 50;

/**
 * Microseconds per stage in one profile: each sample counts as one sampling interval. The
 * recorded gaps between samples would also charge the time the process waited for a core
 * (on a busy machine, often longer than the work) to whatever it was doing when it stopped.
 */
function byStage(p: Profile): Map<string, number> {
  const stageOf = new Map<number, string | undefined>();
  for (const n of p.nodes) {
    const url = sourceOf(n.callFrame.url, n.callFrame.lineNumber, n.callFrame.columnNumber);
    stageOf.set(n.id, STAGES.find(([, t]) => t(url, n.callFrame.functionName))?.[0]);
  }
  const out = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const s = stageOf.get(p.samples[i]!);
    if (s) out.set(s, (out.get(s) ?? 0) + INTERVAL_US);
  }
  return out;
}

/** Profiles blocks of work; `add` sums a block's µs per stage into a named total. */
export class StageProfiler {
  private readonly session = new Session();
  readonly totals = new Map<string, Map<string, number>>();

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post("Profiler.enable");
    await this.session.post("Profiler.setSamplingInterval", { interval: INTERVAL_US });
  }

  async profile(name: string, block: () => Promise<void>): Promise<void> {
    await this.session.post("Profiler.start");
    try {
      await block();
    } finally {
      const { profile } = (await this.session.post("Profiler.stop")) as unknown as { profile: Profile };
      const t = this.totals.get(name) ?? new Map<string, number>();
      for (const [s, us] of byStage(profile)) t.set(s, (t.get(s) ?? 0) + us);
      this.totals.set(name, t);
    }
  }

  stop(): void {
    this.session.disconnect();
  }

  /** Lines: µs per unit for each stage, for `name` and `base`, and the difference (what `name` added). */
  table(name: string, base: string, units: number, unit: string): string[] {
    const a = this.totals.get(name) ?? new Map<string, number>();
    const b = this.totals.get(base) ?? new Map<string, number>();
    const lines: string[] = [];
    let sumA = 0;
    let sumB = 0;
    for (const s of STAGE_NAMES) {
      const x = (a.get(s) ?? 0) / units;
      const y = (b.get(s) ?? 0) / units;
      sumA += x;
      sumB += y;
      if (x < 0.005 && y < 0.005) continue;
      lines.push(`    ${s.padEnd(56)} ${x.toFixed(2).padStart(8)} ${y.toFixed(2).padStart(8)} ${(x - y).toFixed(2).padStart(8)}`);
    }
    lines.unshift(`    ${`µs per ${unit}`.padEnd(56)} ${name.padStart(8)} ${base.padStart(8)} ${"added".padStart(8)}`);
    lines.push(
      `    ${"total (sampled; idle and native waits excluded)".padEnd(56)} ${sumA.toFixed(2).padStart(8)} ${sumB.toFixed(2).padStart(8)} ${(sumA - sumB).toFixed(2).padStart(8)}`,
    );
    return lines;
  }
}
