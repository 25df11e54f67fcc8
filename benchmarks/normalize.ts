/**
 * Records per second normalizing the same corpora with tracepipe's adapters and
 * with @langchain/core's v1 block translators (the public path: build
 * HumanMessage / AIMessage / ToolMessage with the vendor content, tool calls
 * parsed and usage set, as the LangChain provider packages do, then read
 * `.contentBlocks`, which dispatches to the provider's translator; a stream is
 * one AIMessageChunk per chunk/event, concatenated, as the provider packages
 * fold them). One ratio per record class: text-only, multi-turn with tools,
 * images, streams (see corpus.ts).
 *
 *   npx tsx benchmarks/normalize.ts [--records 1000] [--rounds 3] [--passes 15]
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { generateCorpus, RECORD_CLASSES, type CorpusRecord, type RecordClass } from "./corpus.js";
import { lcAnthropic, lcOpenAI } from "./normalize-peer.js";
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

const N = arg("records", 1000);
const ROUNDS = arg("rounds", 3);
const PASSES = arg("passes", 15);

// --- timing -------------------------------------------------------------------------
// Each (class, variant) is measured in a child process of its own: in one shared heap
// the peer's allocation left garbage that whichever variant ran next paid for, and
// the order decided the ratio. Rounds interleave classes and variants; time is the
// process's CPU time (user + system, GC threads included), which a loaded machine's
// scheduling does not inflate as it does wall time.
const AUTO = "tracepipe normalize (auto-detect)";
const KNOWN = "tracepipe adapter (format known)";
const PEER = "@langchain/core block translators";
const variants: Record<string, (r: CorpusRecord) => unknown> = {
  [AUTO]: (r) => normalize(r.payload),
  [KNOWN]: (r) => (r.vendor === "openai" ? openaiChat : anthropicMessages).normalize(r.payload),
  [PEER]: (r) => (r.vendor === "openai" ? lcOpenAI(r) : lcAnthropic(r)),
};

/**
 * Child: CPU µs per record of one variant on one class, after warm-up: the median
 * pass, and the best pass (on a shared machine the least disturbed one is the
 * closest to the code's own cost).
 */
function measure(kind: RecordClass, variant: string): { median: number; best: number } {
  const corpus = generateCorpus(N, kind);
  const fn = variants[variant]!;
  let sink = 0; // keeps results alive so nothing is optimised away
  const pass = () => {
    const t0 = process.cpuUsage();
    for (const rec of corpus) sink += fn(rec) ? 1 : 0;
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / corpus.length;
  };
  for (let i = 0; i < 3; i++) pass();
  const xs: number[] = [];
  for (let i = 0; i < PASSES; i++) xs.push(pass());
  if (sink < 0) console.log(sink);
  return { median: median(xs), best: Math.min(...xs) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const child = process.argv.indexOf("--child");
if (child > 0) {
  console.log(JSON.stringify(measure(process.argv[child + 1] as RecordClass, process.argv[child + 2]!)));
} else {
  const self = fileURLToPath(import.meta.url);
  const results: Record<string, Record<string, number[]>> = {};
  const bests: Record<string, Record<string, number[]>> = {};
  for (const k of RECORD_CLASSES) results[k] = Object.fromEntries(Object.keys(variants).map((v) => [v, [] as number[]]));
  for (const k of RECORD_CLASSES) bests[k] = Object.fromEntries(Object.keys(variants).map((v) => [v, [] as number[]]));
  const names = Object.keys(variants);
  for (let round = 0; round < ROUNDS; round++) {
    for (const k of RECORD_CLASSES) {
      // Rotate the order so each variant follows each other equally often.
      for (let j = 0; j < names.length; j++) {
        const v = names[(round + j) % names.length]!;
        const out = execFileSync(process.execPath, [...process.execArgv, self, "--child", k, v, "--records", String(N), "--passes", String(PASSES)], { encoding: "utf8" });
        const m = JSON.parse(out.trim().split("\n").at(-1)!) as { median: number; best: number };
        results[k]![v]!.push(m.median);
        bests[k]![v]!.push(m.best);
      }
    }
  }
  console.log(`normalize benchmark: ${N} records per class (half OpenAI, half Anthropic), ${ROUNDS} rounds x ${PASSES} passes, one process per measurement`);
  console.log(`CPU µs per record: median pass (median over rounds) / best pass; ratio = peer µs / tracepipe µs`);
  console.log(`  ${"class".padEnd(8)} ${"auto-detect".padStart(13)} ${"known".padStart(13)} ${"peer".padStart(15)}   ${"auto ratio".padStart(16)} ${"known ratio".padStart(16)}`);
  let worst = Infinity;
  let worstBest = Infinity;
  const pair = (a: number, b: number, w: number) => `${a.toFixed(2)} / ${b.toFixed(2)}`.padStart(w);
  for (const k of RECORD_CLASSES) {
    const r = results[k]!;
    const b = bests[k]!;
    const [a, kn, p] = [median(r[AUTO]!), median(r[KNOWN]!), median(r[PEER]!)];
    const [ab, knb, pb] = [Math.min(...b[AUTO]!), Math.min(...b[KNOWN]!), Math.min(...b[PEER]!)];
    worst = Math.min(worst, p / a);
    worstBest = Math.min(worstBest, pb / ab);
    console.log(`  ${k.padEnd(8)} ${pair(a, ab, 13)} ${pair(kn, knb, 13)} ${pair(p, pb, 15)}   ${`${(p / a).toFixed(2)}x / ${(pb / ab).toFixed(2)}x`.padStart(16)} ${`${(p / kn).toFixed(2)}x / ${(pb / knb).toFixed(2)}x`.padStart(16)}`);
  }
  console.log(`  target: auto-detect >= 3x the peer on every class; worst class ${worst.toFixed(2)}x (median) / ${worstBest.toFixed(2)}x (best)`);
}
