/**
 * The monitoring rollups are exact: after random posts, patches that change a
 * run's end, error, usage and model, out-of-order and repeated updates and a
 * prune, every count and sum the monitoring queries give equals a direct
 * aggregation over the stored runs, and every percentile is within the
 * histogram's stated error (HIST_ALPHA) of the exact nearest-rank one; the
 * threads list (kept on ingest too) equals the roots grouped by conversation id.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Store } from "../../../src/store/index.js";
import type { StoredRun } from "../../../src/store/contract/runs.js";
import type { Breakdown, MonitorQuery } from "../../../src/store/contract/monitor.js";
import { HIST_ALPHA } from "../../../src/store/rollup.js";
import { childRun, eachStore, rootRun, type OpenStore, type Rec } from "./fixtures.js";

const HOUR = 3_600_000;
const DAY_START = Date.parse("2026-11-10T00:00:00.000Z");
const at = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");
const MODELS = ["gpt-4o", "claude-x", "mistral-s"];

const RunSpec = fc.record({
  offsetMin: fc.integer({ min: 0, max: 6 * 60 - 1 }),
  llm: fc.boolean(),
  latency: fc.integer({ min: 1, max: 20_000 }),
  ttft: fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }),
  model: fc.constantFrom(...MODELS),
  laterModel: fc.option(fc.constantFrom(...MODELS), { nil: undefined }),
  input: fc.integer({ min: 0, max: 5000 }),
  output: fc.integer({ min: 0, max: 5000 }),
  cost: fc.option(
    fc.integer({ min: 1, max: 10_000 }).map((c) => c / 1000),
    { nil: undefined },
  ),
  error: fc.boolean(),
  /** Whether the end (and usage) comes by a patch, and whether that patch arrives before the post. */
  patched: fc.boolean(),
  patchFirst: fc.boolean(),
  postTwice: fc.boolean(),
  name: fc.constantFrom("agent", "search", "chat"),
  /** A root's conversation id when posted, and in its later patch (which replaces the metadata). */
  session: fc.constantFrom("s1", "s2", undefined),
  laterSession: fc.constantFrom("s1", "s3", undefined),
});
const TraceSpec = fc.record({ root: RunSpec, children: fc.array(RunSpec, { maxLength: 3 }) });
const Scenario = fc.record({
  traces: fc.array(TraceSpec, { minLength: 1, maxLength: 5 }),
  order: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 64, maxLength: 64 }),
  batch: fc.integer({ min: 1, max: 6 }),
  prune: fc.boolean(),
});
type RunSpecT = typeof RunSpec extends fc.Arbitrary<infer T> ? T : never;

function usage(s: RunSpecT) {
  return {
    messages: [
      {
        role: "assistant",
        content: [{ type: "text", text: "a" }],
        usage_metadata: {
          input_tokens: s.input,
          output_tokens: s.output,
          total_tokens: s.input + s.output,
          ...(s.cost === undefined ? {} : { total_cost: s.cost }),
        },
      },
    ],
  };
}

/** The post and patches of one run, as separate operations. */
function operations(post: Rec, s: RunSpecT, start: number): { post?: Rec; patch?: Rec }[] {
  const end = { end_time: at(start + s.latency), ...(s.error ? { error: "boom" } : {}) };
  const llm = s.llm ? { outputs: usage(s), events: s.ttft === undefined ? [] : [{ name: "new_token", time: at(start + s.ttft) }] } : {};
  const session = (id: string | undefined) => (post.parent_run_id || id === undefined ? {} : { session_id: id });
  const meta = { extra: { metadata: { trace_model_name: s.model, trace_provider: s.model.split("-")[0], ...session(s.session) } } };
  const ops: { post?: Rec; patch?: Rec }[] = [];
  if (!s.patched) ops.push({ post: { ...post, ...end, ...llm, ...meta } });
  else {
    ops.push({ post: { ...post, ...meta } });
    const patch = { patch: { id: post.id, ...end, ...llm } };
    if (s.patchFirst) ops.unshift(patch);
    else ops.push(patch);
  }
  if (s.postTwice) ops.push({ post: { ...post, ...meta } });
  // A later patch naming another model and usage: the run's old part must leave the rollups.
  if (s.laterModel)
    ops.push({
      patch: {
        id: post.id,
        extra: { metadata: { trace_model_name: s.laterModel, trace_provider: s.laterModel.split("-")[0], ...session(s.laterSession) } },
        ...(s.llm ? { outputs: usage({ ...s, input: s.input + 1 }) } : {}),
      },
    });
  return ops;
}

async function storedRuns(store: Store, project: string): Promise<StoredRun[]> {
  const out: StoredRun[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.queryRuns({ project, limit: 1000, cursor });
    out.push(...page.runs);
    cursor = page.cursor ?? undefined;
  } while (cursor);
  return out;
}

/** Nearest-rank percentile of exact values. */
function exactPercentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
}

function expectWithinAlpha(got: number | null, exact: number | null): void {
  expect(got === null).toBe(exact === null);
  if (got !== null && exact !== null) expect(Math.abs(got - exact)).toBeLessThanOrEqual(HIST_ALPHA * exact * (1 + 1e-9));
}

interface Direct {
  root: boolean;
  llm: boolean;
  k: number;
  err: boolean;
  lat: number | null;
  ttft: number | null;
  input: number;
  output: number;
  cost: number | null;
  model: string;
  provider: string;
  name: string;
}

/** Each stored run's part in the charts, read from the run itself. */
function direct(q: MonitorQuery, runs: StoredRun[]): Direct[] {
  const n = Math.ceil((q.to_ms - q.from_ms) / q.step_ms);
  const out: Direct[] = [];
  for (const r of runs) {
    const start = r.start_time ? Date.parse(r.start_time) : NaN;
    const k = Math.floor((start - q.from_ms) / q.step_ms);
    if (!(k >= 0 && k < n && start < q.to_ms)) continue;
    const meta = ((r.extra as Record<string, unknown> | undefined)?.metadata ?? {}) as Record<string, unknown>;
    const u = ((r.outputs as { messages?: { usage_metadata?: Record<string, number> }[] } | undefined)?.messages?.[0]?.usage_metadata ??
      {}) as Record<string, number>;
    const llm = r.run_type === "llm";
    out.push({
      root: !r.parent_run_id,
      llm,
      k,
      err: r.error != null,
      lat: r.end_time ? Date.parse(r.end_time) - start : null,
      ttft: r.first_token_time ? Date.parse(r.first_token_time) - start : null,
      input: llm ? (u.input_tokens ?? 0) : 0,
      output: llm ? (u.output_tokens ?? 0) : 0,
      cost: llm && typeof u.total_cost === "number" ? u.total_cost : null,
      model: typeof meta.trace_model_name === "string" ? meta.trace_model_name : "",
      provider: typeof meta.trace_provider === "string" ? meta.trace_provider : "",
      name: r.name ?? "",
    });
  }
  return out;
}

/** The threads list equals the root runs grouped by their conversation id. */
async function checkThreads(store: Store, project: string): Promise<void> {
  const groups = new Map<string, StoredRun[]>();
  for (const r of await storedRuns(store, project)) {
    const id = (r.extra as { metadata?: { session_id?: string } } | undefined)?.metadata?.session_id;
    if (!r.parent_run_id && id !== undefined) groups.set(id, [...(groups.get(id) ?? []), r]);
  }
  const { threads } = await store.listThreads({ project, limit: 500 });
  expect(threads.map((t) => t.thread_id).sort()).toEqual([...groups.keys()].sort());
  for (const t of threads) {
    const roots = groups.get(t.thread_id)!;
    const starts = roots.map((r) => r.start_time!).sort();
    const lats = roots.filter((r) => r.end_time).map((r) => Date.parse(r.end_time!) - Date.parse(r.start_time!));
    expect([t.turns, t.first_time, t.last_time]).toEqual([roots.length, starts[0], starts[starts.length - 1]]);
    if (lats.length === 0) expect(t.latency_ms).toBeNull();
    // SQLite reckons a latency in days (julianday): up to some 50 microseconds off per turn.
    else expect(Math.abs(t.latency_ms! - lats.reduce((a, b) => a + b, 0))).toBeLessThan(0.1 * lats.length);
  }
  expect(threads.map((t) => t.last_time)).toEqual([...threads.map((t) => t.last_time)].sort().reverse());
}

async function checkExact(store: Store, q: MonitorQuery): Promise<void> {
  const runs = direct(q, await storedRuns(store, q.project));
  const n = Math.ceil((q.to_ms - q.from_ms) / q.step_ms);
  const m = await store.monitorSeries(q);
  const per = (pick: (d: Direct) => boolean, f: (ds: Direct[]) => unknown) =>
    Array.from({ length: n }, (_, k) => f(runs.filter((d) => d.k === k && pick(d))));
  const root = (d: Direct) => d.root;
  const llm = (d: Direct) => d.llm;
  const sum = (f: (d: Direct) => number) => (ds: Direct[]) => ds.reduce((a, d) => a + f(d), 0);
  expect(m.traces.runs).toEqual(per(root, (ds) => ds.length));
  expect(m.traces.errors).toEqual(per(root, (ds) => ds.filter((d) => d.err).length));
  expect(m.llm.runs).toEqual(per(llm, (ds) => ds.length));
  expect(m.llm.errors).toEqual(per(llm, (ds) => ds.filter((d) => d.err).length));
  expect(m.llm.streamed).toEqual(per(llm, (ds) => ds.filter((d) => d.ttft !== null).length));
  expect(m.llm.input_tokens).toEqual(
    per(
      llm,
      sum((d) => d.input),
    ),
  );
  expect(m.llm.output_tokens).toEqual(
    per(
      llm,
      sum((d) => d.output),
    ),
  );
  const costs = per(llm, (ds) => (ds.some((d) => d.cost !== null) ? ds.reduce((a, d) => a + (d.cost ?? 0), 0) : null)) as (number | null)[];
  m.llm.cost.forEach((c, k) => {
    expect(c === null).toBe(costs[k] === null);
    if (c !== null) expect(c).toBeCloseTo(costs[k]!, 9);
  });
  const pct = (pick: (d: Direct) => boolean, v: (d: Direct) => number | null, p: number) =>
    per(pick, (ds) =>
      exactPercentile(
        ds.map(v).filter((x): x is number => x !== null),
        p,
      ),
    ) as (number | null)[];
  for (const [got, exact] of [
    [m.traces.latency_p50, pct(root, (d) => d.lat, 0.5)],
    [m.traces.latency_p95, pct(root, (d) => d.lat, 0.95)],
    [m.traces.latency_p99, pct(root, (d) => d.lat, 0.99)],
    [m.llm.latency_p50, pct(llm, (d) => d.lat, 0.5)],
    [m.llm.latency_p99, pct(llm, (d) => d.lat, 0.99)],
    [m.llm.ttft_p95, pct(llm, (d) => d.ttft, 0.95)],
  ] as const) {
    got.forEach((g, k) => expectWithinAlpha(g, exact[k]!));
  }
  for (const by of ["model", "provider", "name"] as Breakdown[]) {
    const pick = by === "name" ? root : llm;
    const groups = new Map<string, Direct[]>();
    for (const d of runs) if (pick(d) && d[by] !== "") groups.set(d[by], [...(groups.get(d[by]) ?? []), d]);
    const rows = await store.monitorBreakdown(q, by);
    expect(rows.map((r) => r.value).sort()).toEqual([...groups.keys()].sort());
    for (const r of rows) {
      const ds = groups.get(r.value)!;
      expect([r.runs, r.errors, r.spark]).toEqual([
        ds.length,
        ds.filter((d) => d.err).length,
        Array.from({ length: n }, (_, k) => ds.filter((d) => d.k === k).length),
      ]);
      if (by !== "name") expect([r.input_tokens, r.output_tokens]).toEqual([sum((d) => d.input)(ds), sum((d) => d.output)(ds)]);
      expectWithinAlpha(
        r.latency_p95,
        exactPercentile(
          ds.map((d) => d.lat).filter((x): x is number => x !== null),
          0.95,
        ),
      );
    }
  }
}

export function rollupsContract(open: OpenStore): void {
  describe("monitoring rollups", () => {
    const store = eachStore(open);

    it("and the threads list equal a direct aggregation over the runs after random posts, patches, out-of-order and repeated updates and a prune", async () => {
      let iteration = 0;
      await fc.assert(
        fc.asyncProperty(Scenario, async (sc) => {
          const project = `roll-${++iteration}`;
          const ops: { post?: Rec; patch?: Rec }[][] = [];
          for (const t of sc.traces) {
            const rootStart = DAY_START + t.root.offsetMin * 60_000;
            const root = rootRun({
              start_time: at(rootStart),
              session_name: project,
              name: t.root.name,
              run_type: t.root.llm ? "llm" : "chain",
            });
            ops.push(operations(root, t.root, rootStart));
            for (const c of t.children) {
              const start = rootStart + (c.offsetMin % 90) * 60_000;
              ops.push(operations(childRun(root, { start_time: at(start), name: c.name, run_type: c.llm ? "llm" : "tool" }), c, start));
            }
          }
          // Interleave the runs' operations at random, each run's own in order (a patch may still come first: patchFirst).
          const queue = ops.map((o, i) => ({ o, key: sc.order[i % sc.order.length]! }));
          const flat: { post?: Rec; patch?: Rec }[] = [];
          while (queue.some((x) => x.o.length)) {
            const live = queue.filter((x) => x.o.length).sort((a, b) => a.key - b.key);
            const pick = live[flat.length % live.length]!;
            flat.push(pick.o.shift()!);
          }
          for (let i = 0; i < flat.length; i += sc.batch) {
            const b = flat.slice(i, i + sc.batch);
            await store().ingest({
              post: b.flatMap((x) => (x.post ? [x.post] : [])),
              patch: b.flatMap((x) => (x.patch ? [x.patch] : [])) as never,
            });
          }
          if (sc.prune) await store().pruneTraces(new Date(DAY_START + 2 * HOUR));
          await checkThreads(store(), project);
          await checkExact(store(), { project, from_ms: DAY_START, to_ms: DAY_START + 8 * HOUR, step_ms: HOUR });
          await checkExact(store(), { project, from_ms: DAY_START, to_ms: DAY_START + 2 * 86_400_000, step_ms: 86_400_000 });
          // A range whose end is not on the hour: its last part is read from the runs.
          await checkExact(store(), { project, from_ms: DAY_START, to_ms: DAY_START + 3 * HOUR + 1_234_567, step_ms: HOUR });
        }),
        { numRuns: 12 },
      );
    }, 240_000);
  });
}
