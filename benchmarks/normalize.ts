/**
 * Records per second normalizing the same corpora with tracepipe's adapters and
 * with @langchain/core's v1 block translators (the public path: build
 * HumanMessage / AIMessage / ToolMessage with the vendor content, tool calls
 * parsed and usage set, as the LangChain provider packages do, then read
 * `.contentBlocks`, which dispatches to the provider's translator; a stream is
 * one AIMessageChunk per chunk/event, concatenated, as the provider packages
 * fold them). One ratio per (format, record class): OpenAI chat, Anthropic
 * Messages, OpenAI Responses, Gemini and Bedrock Converse, each as text-only,
 * multi-turn with tools, images and streams (see corpus.ts, corpus-formats.ts).
 * Detection's share of each class is measured too: `detectFormat` alone, as a share of
 * the auto-detecting normalize's time (what knowing the format would save), and the
 * share of records detection's fast path (adapters/fast-detect.ts) decides alone.
 * A format whose adapter is not registered (merged separately) is skipped with a notice.
 *
 *   npx tsx benchmarks/normalize.ts [--records 1000] [--rounds 3] [--passes 15]
 *                                   [--formats openai-responses,gemini] [--classes text,streams]
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { RECORD_CLASSES, type RecordClass } from "./corpus.js";
import { FORMATS, generateFormatCorpus, type Format, type FormatRecord } from "./corpus-formats.js";
import { lcAnthropic, lcConverse, lcGemini, lcOpenAI, lcResponses } from "./normalize-peer.js";
import { loadBuilt } from "./load.js";

// Measure the compiled JavaScript that users run (dist/, built by `npm install`), as the
// peer is measured from its published build; fall back to the TypeScript sources.
const { normalize, detectFormat } = await loadBuilt<typeof import("../src/normalize.js")>("src/normalize.js");
const { getAdapter, fastDetect, soleResponseClaim } = await loadBuilt<typeof import("../adapters/index.js")>("adapters/index.js");

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}
function list<T extends string>(name: string, all: readonly T[]): T[] {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return [...all];
  const want = process.argv[i + 1]!.split(",");
  for (const w of want)
    if (!all.includes(w as T)) throw new Error(`--${name}: unknown ${JSON.stringify(w)}; expected some of ${all.join(",")}`);
  return want as T[];
}

const N = arg("records", 1000);
const ROUNDS = arg("rounds", 3);
const PASSES = arg("passes", 15);

const PEERS: Record<Format, (r: FormatRecord) => unknown> = {
  "openai-chat": lcOpenAI,
  "anthropic-messages": lcAnthropic,
  "openai-responses": lcResponses,
  gemini: lcGemini,
  "bedrock-converse": lcConverse,
};

// --- timing -------------------------------------------------------------------------
// Each (format, class, variant) is measured in a child process of its own: in one shared
// heap the peer's allocation left garbage that whichever variant ran next paid for, and
// the order decided the ratio. Rounds interleave formats, classes and variants; time is
// the process's CPU time (user + system, GC threads included), which a loaded machine's
// scheduling does not inflate as it does wall time.
const AUTO = "tracepipe normalize (auto-detect)";
const KNOWN = "tracepipe adapter (format known)";
const PEER = "@langchain/core block translators";
const DETECT = "tracepipe detectFormat alone";
const NAMES = [AUTO, KNOWN, PEER, DETECT];

function variant(format: Format, name: string): (r: FormatRecord) => unknown {
  if (name === PEER) return PEERS[format];
  if (name === AUTO) return (r) => normalize(r.payload);
  if (name === DETECT) return (r) => detectFormat(r.payload);
  const adapter = getAdapter(format)!;
  return (r) => adapter.normalize(r.payload);
}

interface Measured {
  median: number;
  best: number;
  /** Peak resident set of the measuring process, MiB. */
  rss: number;
}

/**
 * Child: CPU µs per record of one variant on one (format, class), after warm-up: the
 * median pass, and the best pass (on a shared machine the least disturbed one is the
 * closest to the code's own cost).
 */
function measure(format: Format, kind: RecordClass, name: string): Measured {
  const corpus = generateFormatCorpus(N, kind, format);
  // A record auto-detected as another format (or refused) would time an error path, not this one.
  if (name !== PEER)
    for (const rec of corpus)
      if (normalize(rec.payload).format !== format)
        throw new Error(`a ${format} ${kind} record was detected as ${normalize(rec.payload).format}`);
  const fn = variant(format, name);
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
  return { median: median(xs), best: Math.min(...xs), rss: process.resourceUsage().maxRSS / 1024 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const child = process.argv.indexOf("--child");
if (child > 0) {
  console.log(JSON.stringify(measure(process.argv[child + 1] as Format, process.argv[child + 2] as RecordClass, process.argv[child + 3]!)));
} else {
  const self = fileURLToPath(import.meta.url);
  const classes = list("classes", RECORD_CLASSES);
  const formats: Format[] = [];
  for (const f of list("formats", FORMATS)) {
    if (getAdapter(f)) formats.push(f);
    else console.log(`skipping ${f}: no "${f}" adapter is registered on this branch`);
  }
  type Cell = Record<string, Measured[]>;
  const cells = new Map<string, Cell>();
  const key = (f: Format, k: RecordClass) => `${f} ${k}`;
  for (const f of formats) for (const k of classes) cells.set(key(f, k), Object.fromEntries(NAMES.map((v) => [v, [] as Measured[]])));
  // A full run is a few hundred child processes (minutes); say where it is on stderr,
  // so a run that is slow is told apart from one that hangs, and stdout stays the table.
  const total = ROUNDS * formats.length * classes.length * NAMES.length;
  let done = 0;
  for (let round = 0; round < ROUNDS; round++) {
    process.stderr.write(`round ${round + 1}/${ROUNDS}: ${done}/${total} measurements done\n`);
    for (const f of formats) {
      for (const k of classes) {
        // Rotate the order so each variant follows each other equally often.
        for (let j = 0; j < NAMES.length; j++) {
          const v = NAMES[(round + j) % NAMES.length]!;
          const out = execFileSync(
            process.execPath,
            [...process.execArgv, self, "--child", f, k, v, "--records", String(N), "--passes", String(PASSES)],
            { encoding: "utf8" },
          );
          cells.get(key(f, k))![v]!.push(JSON.parse(out.trim().split("\n").at(-1)!) as Measured);
          done++;
        }
      }
    }
  }
  console.log(`normalize benchmark: ${N} records per (format, class), ${ROUNDS} rounds x ${PASSES} passes, one process per measurement`);
  console.log(
    `CPU µs per record: median pass (median over rounds) / best pass; ratio = peer µs / tracepipe µs; peak RSS of the measuring process (max over rounds)`,
  );
  const fw = Math.max(...formats.map((f) => f.length), 6);
  console.log(`detect share = detectFormat alone / auto-detect (medians); fast path = records the fast path decides alone`);
  console.log(
    `  ${"format".padEnd(fw)} ${"class".padEnd(8)} ${"auto-detect".padStart(13)} ${"known".padStart(13)} ${"peer".padStart(15)}   ${"auto ratio".padStart(16)} ${"known ratio".padStart(16)} ${"detect share".padStart(13)} ${"fast path".padStart(9)}   ${"peak RSS auto / peer".padStart(20)}`,
  );
  let worst = Infinity;
  let worstBest = Infinity;
  let worstAt = "";
  const pair = (a: number, b: number, w: number) => `${a.toFixed(2)} / ${b.toFixed(2)}`.padStart(w);
  for (const f of formats) {
    for (const k of classes) {
      const c = cells.get(key(f, k))!;
      const med = (v: string) => median(c[v]!.map((m) => m.median));
      const best = (v: string) => Math.min(...c[v]!.map((m) => m.best));
      const rss = (v: string) => Math.max(...c[v]!.map((m) => m.rss));
      const [a, kn, p, d] = [med(AUTO), med(KNOWN), med(PEER), med(DETECT)];
      const [ab, knb, pb] = [best(AUTO), best(KNOWN), best(PEER)];
      const corpus = generateFormatCorpus(N, k, f);
      // Either fast path (chat pairs, or a pair whose response only one adapter reads) counts.
      const fast = corpus.filter((r) => (fastDetect(r.payload) ?? soleResponseClaim(r.payload)) !== undefined).length / corpus.length;
      if (p / a < worst) {
        worst = p / a;
        worstAt = key(f, k);
      }
      worstBest = Math.min(worstBest, pb / ab);
      console.log(
        `  ${f.padEnd(fw)} ${k.padEnd(8)} ${pair(a, ab, 13)} ${pair(kn, knb, 13)} ${pair(p, pb, 15)}   ${`${(p / a).toFixed(2)}x / ${(pb / ab).toFixed(2)}x`.padStart(16)} ${`${(p / kn).toFixed(2)}x / ${(pb / knb).toFixed(2)}x`.padStart(16)} ${`${((100 * d) / a).toFixed(1)}%`.padStart(13)} ${`${(100 * fast).toFixed(0)}%`.padStart(9)}   ${`${rss(AUTO).toFixed(0)} / ${rss(PEER).toFixed(0)} MiB`.padStart(20)}`,
      );
    }
  }
  console.log(
    `  target: auto-detect >= 4x the peer on every (format, class); worst ${worstAt}: ${worst.toFixed(2)}x (median) / ${worstBest.toFixed(2)}x (worst best-pass ratio)`,
  );
}
