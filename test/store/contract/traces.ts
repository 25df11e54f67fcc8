/** The trace queries of the store contract: the viewer's list (summaries, filters, sorts, cursors) and tree. */
import { describe, expect, it } from "vitest";
import { CursorError, type Store, type TraceSummary } from "../../../src/store/index.js";
import { childRun, eachStore, rootRun, textMessages, type OpenStore, type Rec } from "./fixtures.js";

const T = (hms: string) => `2026-11-22T${hms}Z`;

/** Three traces: alpha (an llm child with usage and a first token), beta (a failing tool), gamma (still running, elsewhere). */
async function threeTraces(store: Store): Promise<{ alpha: Rec; beta: Rec; gamma: Rec; llm: Rec; tool: Rec }> {
  const alpha = rootRun({ name: "Agent Alpha", session_name: "viewer", start_time: T("10:00:00.000000"), end_time: T("10:00:02.000000") });
  const usage = { input_tokens: 10, output_tokens: 5, total_tokens: 15, total_cost: 0.002 };
  const llm = childRun(alpha, {
    name: "chat",
    run_type: "llm",
    start_time: T("10:00:00.250000"),
    end_time: T("10:00:01.750000"),
    inputs: textMessages(["user", "find the needle in alpha"]),
    outputs: { messages: [{ role: "assistant", content: [{ type: "text", text: "found" }], usage_metadata: usage }] },
    events: [{ name: "new_token", time: T("10:00:00.500000") }],
    extra: { metadata: { trace_provider: "openai", trace_model_name: "gpt-4o" } },
  });
  const beta = rootRun({ name: "beta", session_name: "viewer", start_time: T("10:01:00.000000"), end_time: T("10:01:00.500000") });
  const tool = childRun(beta, { name: "search", start_time: T("10:01:00.100000"), end_time: T("10:01:00.200000"), error: "boom" });
  const gamma = rootRun({ name: "gamma", run_type: "agent", session_name: "other", start_time: T("10:02:00.000000") });
  await store.ingest({ post: [alpha, llm, beta, tool, gamma] });
  return { alpha, beta, gamma, llm, tool };
}

const ids = (page: { traces: TraceSummary[] }) => page.traces.map((t) => t.trace_id);

export function tracesContract(open: OpenStore): void {
  describe("traces: the viewer's list and tree", () => {
    const store = eachStore(open);

    it("summarises each trace from its runs: latency, errors, models, tokens, cost, time to first token", async () => {
      const { alpha, beta } = await threeTraces(store());
      expect(await store().listTraces({ project: "viewer" })).toEqual({
        traces: [
          {
            trace_id: beta.id,
            name: "beta",
            run_type: "chain",
            project: "viewer",
            start_time: T("10:01:00.000000"),
            end_time: T("10:01:00.500000"),
            latency_ms: 500,
            error: "boom",
            error_count: 1,
            run_count: 2,
            models: [],
            providers: [],
            input_tokens: null,
            output_tokens: null,
            total_tokens: null,
            total_cost: null,
            estimated: false,
            ttft_ms: null,
            feedback: [],
          },
          {
            trace_id: alpha.id,
            name: "Agent Alpha",
            run_type: "chain",
            project: "viewer",
            start_time: T("10:00:00.000000"),
            end_time: T("10:00:02.000000"),
            latency_ms: 2000,
            error: null,
            error_count: 0,
            run_count: 2,
            models: ["gpt-4o"],
            providers: ["openai"],
            input_tokens: 10,
            output_tokens: 5,
            total_tokens: 15,
            total_cost: 0.002,
            estimated: false,
            ttft_ms: 500,
            feedback: [],
          },
        ],
        cursor: null,
      });
    });

    it("filters by project, name, run type, model, provider, errors, text, time and cost", async () => {
      const { alpha, beta, gamma } = await threeTraces(store());
      const list = async (f: Parameters<Store["listTraces"]>[0]) => ids(await store().listTraces(f));
      expect(await list({})).toEqual([gamma.id, beta.id, alpha.id]);
      expect(await list({ project: "other" })).toEqual([gamma.id]);
      expect(await list({ name: "ALPHA" })).toEqual([alpha.id]);
      expect(await list({ run_type: "agent" })).toEqual([gamma.id]);
      expect(await list({ model: "gpt-4o" })).toEqual([alpha.id]);
      expect(await list({ provider: "anthropic" })).toEqual([]);
      expect(await list({ errors_only: true })).toEqual([beta.id]);
      expect(await list({ q: "NEEDLE" })).toEqual([alpha.id]);
      expect(await list({ q: "boom" })).toEqual([beta.id]);
      expect(await list({ start_time_gte: T("10:00:30"), start_time_lt: "2026-11-22T11:01:30+01:00" })).toEqual([beta.id]);
      expect(await list({ min_cost: 0.001 })).toEqual([alpha.id]);
      expect(await list({ max_cost: 0.001 })).toEqual([]);
    });

    it("finds text inside large inputs", async () => {
      const root = rootRun({
        session_name: "big",
        inputs: { text: `${"filler ".repeat(200_000)}the hidden marker${" filler".repeat(200_000)}` },
      });
      await store().ingest({ post: [root, rootRun({ session_name: "big" })] });
      expect(ids(await store().listTraces({ q: "hidden marker" }))).toEqual([root.id]);
    });

    it("finds text holding quotes, backslashes and line breaks, which the stored JSON escapes", async () => {
      const root = rootRun({ session_name: "escaped", inputs: { code: 'print("hi")\nC:\\Users' }, outputs: { said: "une école" } });
      await store().ingest({ post: [root, rootRun({ session_name: "escaped" })] });
      for (const q of ['print("hi")', "C:\\Users", ")\nC:", "école"])
        expect(ids(await store().listTraces({ project: "escaped", q })), q).toEqual([root.id]);
    });

    it("sorts by latency or cost either way, traces without one last, ties by trace id", async () => {
      const { alpha, beta, gamma } = await threeTraces(store());
      const list = async (f: Parameters<Store["listTraces"]>[0]) => ids(await store().listTraces(f));
      expect(await list({ sort: "latency" })).toEqual([alpha.id, beta.id, gamma.id]);
      expect(await list({ sort: "latency", order: "asc" })).toEqual([beta.id, alpha.id, gamma.id]);
      // beta and gamma have no cost: last, and between themselves by id in the same direction.
      expect(await list({ sort: "cost" })).toEqual([alpha.id, gamma.id, beta.id]);
      expect(await list({ sort: "cost", order: "asc" })).toEqual([alpha.id, beta.id, gamma.id]);
    });

    it("pages with cursors in every sort, each trace once, and refuses a cursor it did not make", async () => {
      const roots = [3, 1, 4, 0, 2].map((k) =>
        rootRun({
          session_name: "paged",
          start_time: T(`09:00:0${k}.000000`),
          end_time: T(`09:00:0${k}.${String(k * 100).padStart(3, "0")}000`),
        }),
      );
      await store().ingest({ post: roots });
      const walk = async (f: Parameters<Store["listTraces"]>[0]) => {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await store().listTraces({ ...f, project: "paged", limit: 2, cursor });
          seen.push(...ids(page));
          cursor = page.cursor;
          pages++;
        } while (cursor);
        return { seen, pages };
      };
      const byStart = [...roots].sort((a, b) => (a.start_time as string).localeCompare(b.start_time as string)).map((r) => r.id);
      expect(await walk({})).toEqual({ seen: [...byStart].reverse(), pages: 3 });
      expect(await walk({ order: "asc" })).toEqual({ seen: byStart, pages: 3 });
      // Latency grows with start time here (k * 100 ms).
      expect(await walk({ sort: "latency", order: "asc" })).toEqual({ seen: byStart, pages: 3 });
      const first = await store().listTraces({ project: "paged", limit: 2 });
      await expect(store().listTraces({ project: "paged", cursor: "garbage" })).rejects.toBeInstanceOf(CursorError);
      await expect(store().listTraces({ project: "paged", sort: "latency", cursor: first.cursor })).rejects.toBeInstanceOf(CursorError);
    });

    it("pages traces whose root has no start time yet (its patch came before its post) too, in either order", async () => {
      const posted = [1, 2].map((k) => rootRun({ session_name: "unstarted", start_time: T(`09:00:0${k}.000000`) }));
      const patched = [0, 1, 2].map(() => {
        const id = rootRun().id;
        return { id, trace_id: id, session_name: "unstarted", end_time: T("09:00:05.000000"), outputs: { done: true } };
      });
      await store().ingest({ post: posted, patch: patched });
      const walk = async (order: "asc" | "desc") => {
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let pages = 0; pages < 10; pages++) {
          const page = await store().listTraces({ project: "unstarted", order, limit: 1, cursor });
          seen.push(...ids(page));
          cursor = page.cursor;
          if (!cursor) break;
        }
        return seen;
      };
      const unstarted = patched.map((r) => r.id).sort();
      const desc = [posted[1]!.id, posted[0]!.id, ...[...unstarted].reverse()];
      expect(ids(await store().listTraces({ project: "unstarted" }))).toEqual(desc);
      expect(await walk("desc")).toEqual(desc);
      expect(await walk("asc")).toEqual([...desc].reverse());
    });

    it("returns a trace's runs in tree order without payloads, and nothing for an unknown trace", async () => {
      const { alpha, llm } = await threeTraces(store());
      const grandchild = childRun(llm, { name: "inner", start_time: T("10:00:00.300000") });
      const late = childRun(alpha, { name: "late", start_time: T("10:00:01.900000") });
      await store().ingest({ post: [late, grandchild] });
      const runs = await store().traceRuns(alpha.id);
      expect(runs.map((r) => r.name)).toEqual(["Agent Alpha", "chat", "inner", "late"]);
      expect(runs[1]).toEqual({
        id: llm.id,
        parent_run_id: alpha.id,
        dotted_order: llm.dotted_order,
        name: "chat",
        run_type: "llm",
        start_time: T("10:00:00.250000"),
        end_time: T("10:00:01.750000"),
        latency_ms: 1500,
        first_token_time: T("10:00:00.500000"),
        error: null,
        model: "gpt-4o",
        provider: "openai",
        input_tokens: 10,
        output_tokens: 5,
        total_tokens: 15,
        total_cost: 0.002,
        estimated: false,
      });
      expect(await store().traceRuns("0192b3c4-d5e6-7f00-8000-ffffffffffff")).toEqual([]);
    });
  });
}
