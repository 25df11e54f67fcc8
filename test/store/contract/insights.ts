/**
 * Feedback, threads and monitoring aggregates: what the viewer's pages read,
 * by behaviour, on any store.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/errors.js";
import { HIST_ALPHA } from "../../../src/store/rollup.js";
import { childRun, eachStore, newId, rootRun, textMessages, type OpenStore, type Rec } from "./fixtures.js";

const HOUR = 3_600_000;
const DAY_START = Date.parse("2026-11-20T00:00:00.000Z");
const at = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");

/** A root with one llm child: `latency` ms, `model`, tokens and a cost, `error` on the root. */
function turn(
  startMs: number,
  o: {
    latency: number;
    model: string;
    input: number;
    output: number;
    cost: number;
    error?: boolean;
    metadata?: Record<string, unknown>;
    q?: string;
    a?: string;
    ttft?: number;
  },
): Rec[] {
  const root = rootRun({
    start_time: at(startMs),
    end_time: at(startMs + o.latency + 10),
    session_name: "mon",
    inputs: { question: o.q ?? "q" },
    outputs: { answer: o.a ?? "a" },
    extra: { metadata: { ...o.metadata } },
    ...(o.error ? { error: "boom" } : {}),
  });
  const llm = childRun(root, {
    run_type: "llm",
    start_time: at(startMs + 5),
    end_time: at(startMs + 5 + o.latency),
    inputs: textMessages(["user", o.q ?? "q"]),
    outputs: {
      messages: [
        {
          role: "assistant",
          content: [{ type: "text", text: o.a ?? "a" }],
          usage_metadata: { input_tokens: o.input, output_tokens: o.output, total_tokens: o.input + o.output, total_cost: o.cost },
        },
      ],
    },
    events: o.ttft === undefined ? [] : [{ name: "new_token", time: at(startMs + 5 + o.ttft) }],
    extra: { metadata: { trace_model_name: o.model, trace_provider: o.model.startsWith("claude") ? "anthropic" : "openai" } },
  });
  return [root, llm];
}

/** Percentiles read from the rollups' histograms: each within HIST_ALPHA (relative) of the exact nearest-rank value, null where that is null. */
function expectNear(got: (number | null)[], exact: (number | null)[]): void {
  expect(got.map((v) => v === null)).toEqual(exact.map((v) => v === null));
  got.forEach((v, i) => {
    if (v !== null) expect(Math.abs(v - exact[i]!)).toBeLessThanOrEqual(HIST_ALPHA * exact[i]!);
  });
}

export function insightsContract(open: OpenStore): void {
  describe("feedback", () => {
    const store = eachStore(open);

    it("is stored by its id beside its run (before or after it), replaced when sent again, and summed per key on the trace", async () => {
      const [root, llm] = turn(DAY_START, { latency: 100, model: "gpt-4o", input: 1, output: 1, cost: 0.5 });
      const first = newId();
      expect(await store().storeFeedback([{ id: first, run_id: llm!.id, key: "correctness", score: true, comment: "<b>ok</b>" }])).toBe(1);
      await store().ingest({ post: [root!, llm!] });
      await store().storeFeedback([
        { id: first, run_id: llm!.id, key: "correctness", score: 0.5, comment: "revised" },
        { id: newId(), run_id: root!.id, key: "correctness", score: 1, feedback_source: { type: "app", metadata: { user: "u1" } } },
        { id: newId(), run_id: llm!.id, key: "note", value: { label: "x" }, extra_field: 1 },
      ]);
      const onLlm = await store().feedbackOf([llm!.id]);
      expect(onLlm.map((f) => [f.id === first, f.key, f.score, f.value, f.comment, f.source, f.extra])).toEqual([
        [true, "correctness", 0.5, null, "revised", "api", null],
        [false, "note", null, { label: "x" }, null, "api", { extra_field: 1 }],
      ]);
      expect((await store().feedbackOf([root!.id]))[0]).toMatchObject({ source: "app", source_metadata: { user: "u1" } });
      expect(await store().traceFeedback(root!.id)).toEqual([
        { key: "correctness", count: 2, avg_score: 0.75 },
        { key: "note", count: 1, avg_score: null },
      ]);
      const page = await store().listTraces({ feedback_key: "note" });
      expect(page.traces.map((t) => t.trace_id)).toEqual([root!.id]);
      expect(page.traces[0]!.feedback).toEqual(await store().traceFeedback(root!.id));
    });

    it("goes with its project when the project is deleted", async () => {
      const doomed = rootRun({ session_name: "doomed" });
      const kept = rootRun({ session_name: "kept" });
      await store().ingest({ post: [doomed, kept] });
      await store().storeFeedback([
        { id: newId(), run_id: doomed.id, key: "k", score: 1 },
        { id: newId(), run_id: kept.id, key: "k", score: 1 },
      ]);
      await store().deleteProject("doomed");
      expect((await store().feedbackOf([doomed.id, kept.id])).map((f) => f.run_id)).toEqual([kept.id]);
    });

    it("refuses records without a run id or key, naming each field, and stores none of them", async () => {
      const err = await store()
        .storeFeedback(
          [
            { id: newId(), run_id: newId(), key: "ok" },
            { id: newId(), key: "" },
          ],
          (i) => [`feedback.${i}`],
        )
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).issues.map((i) => i.loc.join("."))).toEqual(["feedback.1.run_id", "feedback.1.key"]);
    });
  });

  describe("metadata and tag filters", () => {
    const store = eachStore(open);

    it("match a run of the trace by metadata value as text and by tag, in the trace list and the run query", async () => {
      const a = rootRun({ extra: { metadata: { user: "u1", n: 3, ok: true } }, tags: ["beta"] });
      const b = rootRun({ extra: { metadata: { user: "u2" } } });
      const c = childRun(b, { extra: { metadata: { "<i>k</i>": "<b>v</b>" } }, tags: ["beta", "x"] });
      await store().ingest({ post: [a, b, c] });
      const ids = async (f: Record<string, unknown>) => (await store().listTraces(f)).traces.map((t) => t.trace_id).sort();
      expect(await ids({ metadata: { user: "u1" } })).toEqual([a.id]);
      expect(await ids({ metadata: { n: "3", ok: "true" } })).toEqual([a.id]);
      expect(await ids({ metadata: { "<i>k</i>": "<b>v</b>" } })).toEqual([b.id]);
      expect(await ids({ tags: ["beta"] })).toEqual([a.id, b.id].sort());
      expect(await ids({ tags: ["beta", "x"] })).toEqual([b.id]);
      expect((await store().queryRuns({ tags: ["x"] })).runs.map((r) => r.id)).toEqual([c.id]);
      expect((await store().queryRuns({ metadata: { user: "u2" } })).runs.map((r) => r.id)).toEqual([b.id]);
    });
  });

  describe("threads", () => {
    const store = eachStore(open);

    it("group root runs by session_id, thread_id or conversation_id per project, turns in order", async () => {
      const runs: Rec[] = [];
      for (let i = 0; i < 3; i++) {
        runs.push(
          ...turn(DAY_START + i * HOUR, {
            latency: 100,
            model: "gpt-4o",
            input: 10,
            output: 5,
            cost: 0.25,
            metadata: { session_id: "s1" },
            q: `q${i}`,
            a: `a${i}`,
          }),
        );
        runs.push(
          ...turn(DAY_START + i * HOUR + 60_000, {
            latency: 100,
            model: "gpt-4o",
            input: 10,
            output: 5,
            cost: 0.25,
            metadata: { conversation_id: "<b>c</b>" },
            q: `c${i}`,
          }),
        );
      }
      await store().ingest({ post: runs });
      const { threads } = await store().listThreads({ project: "mon" });
      expect(threads.map((t) => [t.thread_id, t.turns, t.first_message, t.last_message, t.total_tokens, t.cost])).toEqual([
        ["<b>c</b>", 3, "c0", "a", 45, 0.75],
        ["s1", 3, "q0", "a2", 45, 0.75],
      ]);
      const turns = await store().threadTurns("s1", "mon");
      expect(turns.map((t) => [t.user, t.assistant])).toEqual([
        ["q0", "a0"],
        ["q1", "a1"],
        ["q2", "a2"],
      ]);
      expect(await store().threadTurns("s1", "other")).toEqual([]);
    });

    it("page through threads whose last turns started at the same time, each once, in one project and across projects", async () => {
      // Logs with whole-second times (many are) give threads equal last_time: a page must not end among them and lose the rest.
      const same = at(DAY_START + 5 * HOUR);
      const runs = [];
      for (const project of ["pages-a", "pages-b"])
        for (let i = 0; i < 5; i++)
          runs.push(rootRun({ start_time: same, end_time: same, session_name: project, extra: { metadata: { session_id: `t${i}` } } }));
      runs.push(rootRun({ start_time: at(DAY_START + 6 * HOUR), session_name: "pages-a", extra: { metadata: { session_id: "newest" } } }));
      await store().ingest({ post: runs });
      const all = async (project?: string) => {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let pages = 0; pages < 20; pages++) {
          const page = await store().listThreads({ project, limit: 2, cursor });
          seen.push(...page.threads.filter((t) => t.project?.startsWith("pages-")).map((t) => `${t.project}/${t.thread_id}`));
          if (!page.next_cursor) return seen;
          cursor = page.next_cursor;
        }
        throw new Error("no last page");
      };
      const inA = ["newest", "t0", "t1", "t2", "t3", "t4"].map((t) => `pages-a/${t}`);
      expect(await all("pages-a")).toEqual(inA);
      // Across projects, threads at the same time come by project, then id.
      expect(await all()).toEqual([...inA, ...["t0", "t1", "t2", "t3", "t4"].map((t) => `pages-b/${t}`)]);
      await expect(store().listThreads({ cursor: "bm90IGEgY3Vyc29y" })).rejects.toThrow(/invalid cursor/);
    });

    it("keep each thread's first and last turn as turns are added before and after it, move in time and move to another thread", async () => {
      const root = (hours: number, session: string) =>
        rootRun({ start_time: at(DAY_START + hours * HOUR), session_name: "bounds", extra: { metadata: { session_id: session } } });
      const bounds = async () =>
        (await store().listThreads({ project: "bounds" })).threads
          .map((t) => [t.thread_id, t.turns, t.first_time, t.last_time])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
      const a = root(1, "s1");
      await store().ingest({ post: [a, root(2, "s1"), root(3, "s1")] });
      expect(await bounds()).toEqual([["s1", 3, at(DAY_START + HOUR), at(DAY_START + 3 * HOUR)]]);
      const [early, late] = [root(0, "s1"), root(4, "s1")];
      await store().ingest({ post: [early, late] });
      expect(await bounds()).toEqual([["s1", 5, at(DAY_START), at(DAY_START + 4 * HOUR)]]);
      // The last turn moves back in time: the thread's last is the next latest; a later rewrite in place moves nothing.
      await store().ingest({ patch: [{ id: late.id, start_time: at(DAY_START + 2.5 * HOUR) }] });
      await store().ingest({ patch: [{ id: late.id, end_time: at(DAY_START + 2.6 * HOUR) }] });
      expect(await bounds()).toEqual([["s1", 5, at(DAY_START), at(DAY_START + 3 * HOUR)]]);
      // The first turn leaves for another thread: the thread's first is the next earliest.
      await store().ingest({ patch: [{ id: early.id, extra: { metadata: { session_id: "s2" } } }] });
      expect(await bounds()).toEqual([
        ["s1", 4, at(DAY_START + HOUR), at(DAY_START + 3 * HOUR)],
        ["s2", 1, at(DAY_START), at(DAY_START)],
      ]);
      // A turn that moves later than any: the thread's first and last both change; the other thread keeps its own.
      await store().ingest({ patch: [{ id: a.id, start_time: at(DAY_START + 5 * HOUR) }] });
      expect(await bounds()).toEqual([
        ["s1", 4, at(DAY_START + 2 * HOUR), at(DAY_START + 5 * HOUR)],
        ["s2", 1, at(DAY_START), at(DAY_START)],
      ]);
    });

    it("read a numeric session id as text: the list's turns, totals and messages and threadTurns agree, a text id of the same digits is the same thread", async () => {
      const runs: Rec[] = [];
      for (let i = 0; i < 2; i++)
        runs.push(
          ...turn(DAY_START + i * HOUR, {
            latency: 100,
            model: "gpt-4o",
            input: 10,
            output: 5,
            cost: 0.25,
            metadata: { session_id: 42 },
            q: `q${i}`,
            a: `a${i}`,
          }),
        );
      runs.push(
        ...turn(DAY_START + 2 * HOUR, {
          latency: 100,
          model: "gpt-4o",
          input: 10,
          output: 5,
          cost: 0.25,
          metadata: { session_id: "42" },
          q: "q2",
          a: "a2",
        }),
      );
      runs.push(
        ...turn(DAY_START + 3 * HOUR, {
          latency: 100,
          model: "gpt-4o",
          input: 10,
          output: 5,
          cost: 0.25,
          metadata: { session_id: 420 },
          q: "other",
        }),
      );
      await store().ingest({ post: runs });
      const { threads } = await store().listThreads({ project: "mon" });
      const t42 = threads.find((t) => t.thread_id === "42");
      expect(threads.map((t) => t.thread_id).sort()).toEqual(["42", "420"]);
      expect(t42 && [t42.turns, t42.first_message, t42.last_message, t42.total_tokens, t42.cost]).toEqual([3, "q0", "a2", 45, 0.75]);
      const turns = await store().threadTurns("42", "mon");
      expect(turns).toHaveLength(t42!.turns);
      expect(turns.map((t) => [t.user, t.assistant, t.total_tokens])).toEqual([
        ["q0", "a0", 15],
        ["q1", "a1", 15],
        ["q2", "a2", 15],
      ]);
      expect((await store().threadTurns("42")).map((t) => t.user)).toEqual(["q0", "q1", "q2"]);
      expect(await store().threadTurns("42.0", "mon")).toEqual([]);
    });
  });

  describe("monitoring aggregates", () => {
    const store = eachStore(open);

    it("bucket counts, errors, percentiles within the histogram error, ttft, tokens and cost, and break them down", async () => {
      const runs: Rec[] = [];
      // Hour 0: latencies 100..500 ms; hour 2: one failing trace of 1000 ms. Hour 1 is empty.
      [100, 200, 300, 400, 500].forEach((lat, i) =>
        runs.push(
          ...turn(DAY_START + i * 60_000, {
            latency: lat,
            model: i % 2 ? "claude-x" : "gpt-4o",
            input: 10,
            output: 2,
            cost: 0.125,
            ttft: i % 2 ? undefined : 50,
          }),
        ),
      );
      runs.push(...turn(DAY_START + 2 * HOUR, { latency: 1000, model: "gpt-4o", input: 7, output: 3, cost: 0.25, error: true }));
      runs.push(...turn(DAY_START + 5 * HOUR, { latency: 1, model: "gpt-4o", input: 1, output: 1, cost: 1 })); // outside the range
      await store().ingest({ post: runs });
      const q = { project: "mon", from_ms: DAY_START, to_ms: DAY_START + 3 * HOUR, step_ms: HOUR };
      const m = await store().monitorSeries(q);
      expect(m.buckets).toEqual([DAY_START, DAY_START + HOUR, DAY_START + 2 * HOUR]);
      expect(m.traces.runs).toEqual([5, 0, 1]);
      expect(m.traces.errors).toEqual([0, 0, 1]);
      expectNear(m.llm.latency_p50, [300, null, 1000]);
      expectNear(m.llm.latency_p95, [500, null, 1000]);
      expectNear(m.llm.ttft_p50, [50, null, null]);
      expect(m.llm.streamed).toEqual([3, 0, 0]);
      expect(m.llm.input_tokens).toEqual([50, 0, 7]);
      expect(m.llm.output_tokens).toEqual([10, 0, 3]);
      expect(m.llm.cost).toEqual([0.625, null, 0.25]);
      const byModel = await store().monitorBreakdown(q, "model");
      expect(byModel.map((r) => [r.value, r.runs, r.errors, r.input_tokens, r.output_tokens, r.cost, r.spark])).toEqual([
        ["gpt-4o", 4, 0, 37, 9, 0.625, [3, 0, 1]],
        ["claude-x", 2, 0, 20, 4, 0.25, [2, 0, 0]],
      ]);
      const byName = await store().monitorBreakdown(q, "name");
      expect(byName.map((r) => [r.value, r.runs, r.errors, r.input_tokens])).toEqual([["root", 6, 1, null]]);
    });

    it("ranks only the runs whose latency is known, and a bucket where none is has null percentiles", async () => {
      const runs: Rec[] = [];
      // Hour 0: llm latencies 100, 200, 400 and two unfinished runs; hour 1: one unfinished run only.
      [100, 200, undefined, undefined, 400].forEach((lat, i) => {
        const [root, llm] = turn(DAY_START + i * 60_000, { latency: lat ?? 1, model: "gpt-4o", input: 1, output: 1, cost: 0.125 });
        if (lat === undefined) delete llm!.end_time;
        runs.push(root!, llm!);
      });
      const [root, llm] = turn(DAY_START + HOUR, { latency: 1, model: "gpt-4o", input: 1, output: 1, cost: 0.125 });
      delete llm!.end_time;
      runs.push(root!, llm!);
      await store().ingest({ post: runs });
      const q = { project: "mon", from_ms: DAY_START, to_ms: DAY_START + 2 * HOUR, step_ms: HOUR };
      const m = await store().monitorSeries(q);
      expect(m.llm.runs).toEqual([5, 1]);
      expectNear(m.llm.latency_p50, [200, null]);
      expectNear(m.llm.latency_p95, [400, null]);
      const [gpt] = await store().monitorBreakdown(q, "model");
      expect(gpt!.runs).toBe(6);
      expectNear([gpt!.latency_p50, gpt!.latency_p95], [200, 400]);
    });
  });
}
