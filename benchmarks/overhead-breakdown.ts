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
 *
 * A second table charges the same samples by phase, from the call stack rather
 * than the function's file: a tracer's work in a streamed block is partly the
 * chunks' own step and partly per-stream work that only lands in the block
 * (the deferred build of earlier streams' runs, their delivery), and the
 * per-chunk latency figure spreads both over the chunks. A sample whose code
 * is tracepipe's (the nearest frame of a file on its stack, node's internals
 * skipped: an SDK frame our iterator calls stays the SDK's) goes to the
 * outermost phase a tracepipe frame names on its stack: the chunk's step (the
 * wrapped iterator's functions and what they call, the adapter's fold and the
 * promise hooks of our reaction included), the call's hand-over (the wrapped
 * `create` and the call's observers), the deferred build (under `runDeferred`:
 * normalizing, building, queueing), or delivery (the Client's pump and sink);
 * node's HTTP client with no caller above it (a reply arriving) is delivery
 * too. Every other sample keeps its stage.
 */
import { Session } from "node:inspector/promises";
import { sourceOf } from "./source-of.js";

interface ProfileNode {
  id: number;
  callFrame: { url: string; functionName: string; lineNumber: number; columnNumber: number };
  children?: number[];
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

/** Phases of a tracer's work, in the order they are printed (see the module comment). */
const PHASE_CHUNK = "chunk step (tracing/llm next, fold; the adapter's fold)";
const PHASE_CALL = "call hand-over (wrapped create, observers, settle)";
const PHASE_BUILD = "deferred build (under runDeferred)";
const PHASE_DELIVERY = "delivery (Client pump, sink, encoding, node:http)";
const PHASE_NAMES = [PHASE_CHUNK, PHASE_CALL, PHASE_BUILD, PHASE_DELIVERY];

/** The phase a frame itself names, if it is one of tracepipe's that does. */
function phaseOfFrame(url: string, fn: string): string | undefined {
  if (!url.includes("/dist/")) return undefined;
  if (url.includes("/dist/src/run/deferred.js") && fn === "runDeferred") return PHASE_BUILD;
  if (url.includes("/dist/src/tracing/llm.")) return CHUNK_STEP.has(fn.replace(/\d+$/, "")) ? PHASE_CHUNK : PHASE_CALL;
  if (url.includes("/dist/src/tracing/")) return PHASE_CALL;
  if (url.includes("/dist/src/ingest/")) return PHASE_DELIVERY;
  return undefined;
}

/**
 * Microseconds per stage in one profile: each sample counts as one sampling interval. The
 * recorded gaps between samples would also charge the time the process waited for a core
 * (on a busy machine, often longer than the work) to whatever it was doing when it stopped.
 */
function byStage(p: Profile): { stages: Map<string, number>; phases: Map<string, number> } {
  const stageOf = new Map<number, string | undefined>();
  const info = new Map<number, { url: string; fn: string }>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) {
    const url = sourceOf(n.callFrame.url, n.callFrame.lineNumber, n.callFrame.columnNumber);
    const fn = n.callFrame.functionName;
    stageOf.set(n.id, STAGES.find(([, t]) => t(url, fn))?.[0]);
    info.set(n.id, { url, fn });
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  // Per node: whose code runs (the nearest frame of a file, node's internals skipped: tracepipe's, or another's),
  // and the outermost phase a tracepipe frame names on its stack.
  type Walked = { tracepipe: boolean | undefined; phase: string | undefined; http: boolean };
  const memo = new Map<number, Walked>();
  const walk = (id: number): Walked => {
    const known = memo.get(id);
    if (known) return known;
    const up = parent.get(id);
    const above: Walked = up === undefined ? { tracepipe: undefined, phase: undefined, http: false } : walk(up);
    const { url, fn } = info.get(id)!;
    const own = url.startsWith("file:") ? url.includes("/dist/") : undefined;
    const found = {
      tracepipe: own ?? above.tracepipe,
      phase: above.phase ?? phaseOfFrame(url, fn),
      // node's HTTP client (the SDKs fetch through undici instead): only tracepipe's delivery uses it here.
      http: above.http || url.startsWith("node:_http_"),
    };
    memo.set(id, found);
    return found;
  };
  const stages = new Map<string, number>();
  const phases = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    const s = stageOf.get(id);
    if (!s) continue;
    stages.set(s, (stages.get(s) ?? 0) + INTERVAL_US);
    // tracepipe's own work by phase; node's HTTP client on its own (a reply arriving) is delivery; the rest keeps its stage.
    const w = walk(id);
    const ph = w.tracepipe ? (w.phase ?? s) : w.tracepipe === undefined && w.http ? PHASE_DELIVERY : s;
    phases.set(ph, (phases.get(ph) ?? 0) + INTERVAL_US);
  }
  return { stages, phases };
}

/** Profiles blocks of work; `add` sums a block's µs per stage into a named total. */
export class StageProfiler {
  private readonly session = new Session();
  readonly totals = new Map<string, Map<string, number>>();
  /** The same samples charged by phase (tracepipe's phases; other samples keep their stage). */
  readonly phaseTotals = new Map<string, Map<string, number>>();

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
      const { stages, phases } = byStage(profile);
      for (const [into, from] of [
        [this.totals, stages],
        [this.phaseTotals, phases],
      ] as const) {
        const t = into.get(name) ?? new Map<string, number>();
        for (const [s, us] of from) t.set(s, (t.get(s) ?? 0) + us);
        into.set(name, t);
      }
    }
  }

  stop(): void {
    this.session.disconnect();
  }

  /** Lines: µs per unit for each stage, for `name` and `base`, and the difference (what `name` added). */
  table(name: string, base: string, units: number, unit: string): string[] {
    return this.lines(this.totals, STAGE_NAMES, name, base, units, unit);
  }

  /** The same by phase: tracepipe's phases first, then the stages no phase took. */
  phaseTable(name: string, base: string, units: number, unit: string): string[] {
    return this.lines(this.phaseTotals, [...PHASE_NAMES, ...STAGE_NAMES], name, base, units, unit);
  }

  private lines(
    totals: Map<string, Map<string, number>>,
    rows: string[],
    name: string,
    base: string,
    units: number,
    unit: string,
  ): string[] {
    const a = totals.get(name) ?? new Map<string, number>();
    const b = totals.get(base) ?? new Map<string, number>();
    const lines: string[] = [];
    let sumA = 0;
    let sumB = 0;
    for (const s of rows) {
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
