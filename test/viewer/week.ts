/**
 * A generated week of traces with a known shape, for the monitoring, threads,
 * filter and feedback tests (and the viewer benchmark's scale-up):
 * - two traces an hour for 168 hours from WEEK_START, each a chain root with
 *   one llm child, models alternating (gpt-4o-mini / openai, streamed;
 *   claude-3-5-haiku / anthropic, not streamed) with fixed tokens and costs;
 * - a latency step on day 4: llm calls take 400 ms before, 1200 ms from then on;
 * - an error burst: BURST_HOUR has six more traces, all failing;
 * - three threads of five turns on day 7, each under a different metadata key;
 * - metadata `experiment: e7` on four traces, `tier: gold|free` on all, tag
 *   `beta` on every fifth, and one trace whose metadata key and value are markup.
 * Every number a test checks is computed here from the same records.
 */
import { randomUUID } from "node:crypto";

export const PROJECT = "week";
export const WEEK_START = Date.parse("2026-11-16T00:00:00.000Z");
export const HOUR = 3_600_000;
export const STEP_HOUR = 72; // day 4 begins 72 hours in
export const BURST_HOUR = 100;
export const MARKUP = "<img src=x onerror=window.__xss=1>";
/** A metadata key that is markup (and has no `=`, which the `key=value` filter splits on). */
export const MARKUP_KEY = "<i>note</i>";

export const MODELS = [
  { model: "gpt-4o-mini", provider: "openai", input: 100, output: 20, cost: 2 ** -10, streamed: true },
  { model: "claude-3-5-haiku", provider: "anthropic", input: 300, output: 50, cost: 2 ** -8, streamed: false },
] as const;

export const THREADS = [
  { id: "thread-alpha", key: "session_id" },
  { id: `<b>${MARKUP}</b>`, key: "thread_id" },
  { id: "conv-gamma", key: "conversation_id" },
] as const;

type Obj = Record<string, unknown>;

function iso(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "000Z");
}

function stamp(t: string): string {
  return t.replace(/[-:]/g, "").replace(".", "");
}

export interface Week {
  runs: Obj[];
  /** Per model: llm runs, input and output tokens, cost. */
  totals: Record<string, { runs: number; input: number; output: number; cost: number }>;
  /** Trace ids with metadata experiment = e7. */
  experiment: string[];
  /** Trace ids tagged beta. */
  beta: string[];
  /** The trace whose metadata key and value are markup. */
  markupTrace: string;
  /** Per thread id: its turns' trace ids in order, and the user messages. */
  threads: Record<string, { traces: string[]; questions: string[] }>;
  /** llm run ids of the first traces, for feedback. */
  llmRuns: { id: string; trace: string }[];
}

/** One trace: a chain root and its llm call. */
function trace(
  startMs: number,
  i: number,
  o: { latencyMs: number; error?: boolean; metadata?: Obj; tags?: string[]; name?: string; question?: string; answer?: string },
  totals: Week["totals"],
): { runs: Obj[]; root: string; llm: string } {
  const m = MODELS[i % 2]!;
  const root = randomUUID();
  const llm = randomUUID();
  const rootStart = iso(startMs);
  const llmStart = iso(startMs + 10);
  const llmEnd = startMs + 10 + o.latencyMs;
  const rootEnd = llmEnd + 40;
  const question = o.question ?? `question ${i}`;
  const answer = o.answer ?? `answer ${i}`;
  const t = (totals[m.model] ??= { runs: 0, input: 0, output: 0, cost: 0 });
  t.runs++;
  t.input += m.input;
  t.output += m.output;
  t.cost += m.cost;
  const rootRun: Obj = {
    id: root,
    trace_id: root,
    dotted_order: `${stamp(rootStart)}${root}`,
    name: o.name ?? "answer",
    run_type: "chain",
    start_time: rootStart,
    end_time: iso(rootEnd),
    inputs: { question },
    outputs: o.error ? undefined : { answer },
    error: o.error ? "RateLimitError: upstream said 429" : undefined,
    extra: { metadata: { ...o.metadata } },
    tags: o.tags,
    session_name: PROJECT,
  };
  const llmRun: Obj = {
    id: llm,
    trace_id: root,
    parent_run_id: root,
    dotted_order: `${stamp(rootStart)}${root}.${stamp(llmStart)}${llm}`,
    name: "ChatModel",
    run_type: "llm",
    start_time: llmStart,
    end_time: iso(llmEnd),
    inputs: { messages: [{ role: "user", content: [{ type: "text", text: question }] }] },
    outputs: {
      messages: [
        {
          role: "assistant",
          content: [{ type: "text", text: answer }],
          usage_metadata: {
            input_tokens: m.input,
            output_tokens: m.output,
            total_tokens: m.input + m.output,
            input_cost: m.cost / 2,
            output_cost: m.cost / 2,
            total_cost: m.cost,
          },
        },
      ],
    },
    events: m.streamed ? [{ name: "new_token", time: iso(startMs + 10 + 150) }] : [],
    extra: { metadata: { trace_provider: m.provider, trace_model_name: m.model } },
    session_name: PROJECT,
  };
  return { runs: [rootRun, llmRun], root, llm };
}

export function generateWeek(): Week {
  const w: Week = { runs: [], totals: {}, experiment: [], beta: [], markupTrace: "", threads: {}, llmRuns: [] };
  let i = 0;
  const latency = (hour: number) => (hour < STEP_HOUR ? 400 : 1200);
  for (let hour = 0; hour < 168; hour++) {
    const minutes = [10, 40];
    for (const minute of minutes) {
      const metadata: Obj = { tier: i % 3 === 0 ? "gold" : "free" };
      if (i % 40 === 7) metadata.experiment = "e7";
      if (i === 5) metadata[MARKUP_KEY] = MARKUP;
      const tags = i % 5 === 0 ? ["beta"] : undefined;
      const t = trace(WEEK_START + hour * HOUR + minute * 60_000, i, { latencyMs: latency(hour), metadata, tags }, w.totals);
      w.runs.push(...t.runs);
      if (metadata.experiment) w.experiment.push(t.root);
      if (tags) w.beta.push(t.root);
      if (i === 5) w.markupTrace = t.root;
      if (w.llmRuns.length < 4) w.llmRuns.push({ id: t.llm, trace: t.root });
      i++;
    }
    if (hour === BURST_HOUR) {
      for (let k = 0; k < 6; k++) {
        const t = trace(
          WEEK_START + hour * HOUR + (k * 9 + 2) * 60_000,
          i++,
          { latencyMs: latency(hour), error: true, metadata: { tier: "free" } },
          w.totals,
        );
        w.runs.push(...t.runs);
      }
    }
  }
  // Three conversations of five turns on day 7, interleaved, one turn every 10 minutes.
  for (let turn = 0; turn < 5; turn++) {
    THREADS.forEach((th, k) => {
      const question = `Turn ${turn + 1} of ${th.id}: what next?`;
      const t = trace(
        WEEK_START + (150 + turn) * HOUR + (k * 3 + 1) * 60_000,
        i++,
        { latencyMs: latency(150), metadata: { [th.key]: th.id }, name: "chat-turn", question, answer: `Reply ${turn + 1} to ${th.id}` },
        w.totals,
      );
      w.runs.push(...t.runs);
      const entry = (w.threads[th.id] ??= { traces: [], questions: [] });
      entry.traces.push(t.root);
      entry.questions.push(question);
    });
  }
  return w;
}
