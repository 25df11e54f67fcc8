/**
 * Records per second normalizing the same corpus with tracepipe's adapters and
 * with @langchain/core's v1 block translators (the public path: build
 * HumanMessage / AIMessage / ToolMessage with the vendor content, tool calls
 * parsed and usage set, as the LangChain provider packages do, then read
 * `.contentBlocks`, which dispatches to the provider's translator).
 *
 *   npx tsx benchmarks/normalize.ts [--records 2000] [--rounds 7]
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { generateCorpus, type CorpusRecord } from "./corpus.js";
import { loadBuilt } from "./load.js";

// Measure the compiled JavaScript that users run (dist/, built by `npm install`), as the
// peer is measured from its published build; fall back to the TypeScript sources.
const { normalize } = await loadBuilt<typeof import("../src/normalize.js")>("src/normalize.js");
const { openaiChat } = await loadBuilt<typeof import("../adapters/openai-chat/index.js")>("adapters/openai-chat/index.js");
const { anthropicMessages } = await loadBuilt<typeof import("../adapters/anthropic-messages/index.js")>("adapters/anthropic-messages/index.js");

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

const N = arg("records", 2000);
const ROUNDS = arg("rounds", 7);
const corpus = generateCorpus(N);

type Any = Record<string, any>;

// --- the peer: LangChain messages + block translators --------------------------------
function lcOpenAI(rec: CorpusRecord): unknown[] {
  const out: unknown[] = [];
  for (const m of rec.payload.request.messages as Any[]) {
    if (m.role === "system" || m.role === "developer") out.push(new SystemMessage({ content: m.content }).contentBlocks);
    else if (m.role === "user") out.push(new HumanMessage({ content: m.content }).contentBlocks);
    else if (m.role === "tool") out.push(new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id }).contentBlocks);
    else {
      const tool_calls = (m.tool_calls ?? []).map((c: Any) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments || "{}"), type: "tool_call" as const }));
      out.push(new AIMessage({ content: m.content ?? "", tool_calls, response_metadata: { model_provider: "openai" } }).contentBlocks);
    }
  }
  const res = rec.payload.response as Any;
  for (const ch of res.choices) {
    const m = ch.message;
    const tool_calls = (m.tool_calls ?? []).map((c: Any) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments || "{}"), type: "tool_call" as const }));
    const u = res.usage;
    const msg = new AIMessage({
      content: m.content ?? "",
      tool_calls,
      additional_kwargs: m.refusal ? { refusal: m.refusal } : {},
      response_metadata: { model_provider: "openai", model_name: res.model, finish_reason: ch.finish_reason },
      usage_metadata: { input_tokens: u.prompt_tokens, output_tokens: u.completion_tokens, total_tokens: u.total_tokens, input_token_details: { cache_read: u.prompt_tokens_details?.cached_tokens }, output_token_details: { reasoning: u.completion_tokens_details?.reasoning_tokens } },
    });
    out.push(msg.contentBlocks);
  }
  return out;
}

function lcAnthropic(rec: CorpusRecord): unknown[] {
  const req = rec.payload.request as Any;
  const out: unknown[] = [new SystemMessage({ content: req.system }).contentBlocks];
  for (const m of req.messages as Any[]) {
    if (m.role === "user") {
      if (Array.isArray(m.content) && m.content[0]?.type === "tool_result") {
        for (const b of m.content) out.push(new ToolMessage({ content: b.content, tool_call_id: b.tool_use_id }).contentBlocks);
      } else out.push(new HumanMessage({ content: m.content }).contentBlocks);
    } else {
      const tool_calls = (Array.isArray(m.content) ? m.content : []).filter((b: Any) => b.type === "tool_use").map((b: Any) => ({ id: b.id, name: b.name, args: b.input, type: "tool_call" as const }));
      out.push(new AIMessage({ content: m.content, tool_calls, response_metadata: { model_provider: "anthropic" } }).contentBlocks);
    }
  }
  const res = rec.payload.response as Any;
  const u = res.usage;
  const tool_calls = res.content.filter((b: Any) => b.type === "tool_use").map((b: Any) => ({ id: b.id, name: b.name, args: b.input, type: "tool_call" as const }));
  const input = u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
  out.push(
    new AIMessage({
      content: res.content,
      tool_calls,
      response_metadata: { model_provider: "anthropic", model_name: res.model, stop_reason: res.stop_reason },
      usage_metadata: { input_tokens: input, output_tokens: u.output_tokens, total_tokens: input + u.output_tokens, input_token_details: { cache_read: u.cache_read_input_tokens, cache_creation: u.cache_creation_input_tokens } },
    }).contentBlocks,
  );
  return out;
}

// --- timing -------------------------------------------------------------------------
let sink = 0; // keeps results alive so nothing is optimised away
function time(fn: (r: CorpusRecord) => unknown): number {
  const t0 = process.hrtime.bigint();
  for (const rec of corpus) {
    const r = fn(rec);
    sink += (r as unknown[] | { format?: string }) ? 1 : 0;
  }
  const ns = Number(process.hrtime.bigint() - t0);
  return N / (ns / 1e9);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const variants: Record<string, (r: CorpusRecord) => unknown> = {
  "tracepipe normalize (auto-detect)": (r) => normalize(r.payload),
  "tracepipe adapter (format known)": (r) => (r.vendor === "openai" ? openaiChat : anthropicMessages).normalize(r.payload),
  "@langchain/core block translators": (r) => (r.vendor === "openai" ? lcOpenAI(r) : lcAnthropic(r)),
};

const results: Record<string, number[]> = {};
for (const k of Object.keys(variants)) results[k] = [];
// Warm-up: JIT both sides before measuring.
for (const fn of Object.values(variants)) time(fn);
for (let round = 0; round < ROUNDS; round++) {
  // Alternate the order so drift on a noisy machine hits every variant alike.
  const keys = Object.keys(variants);
  if (round % 2) keys.reverse();
  for (const k of keys) results[k]!.push(time(variants[k]!));
}

const peer = median(results["@langchain/core block translators"]!);
console.log(`normalize benchmark: ${N} records (half OpenAI, half Anthropic; multi-turn, tools, images), ${ROUNDS} rounds, medians`);
for (const [k, xs] of Object.entries(results)) {
  console.log(`  ${k.padEnd(36)} ${Math.round(median(xs)).toString().padStart(8)} records/s   ratio vs peer ${(median(xs) / peer).toFixed(2)}x`);
}
console.log(`  target: tracepipe >= 3x the peer; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB (sink ${sink})`);
