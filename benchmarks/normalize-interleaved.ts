/**
 * A second reading of benchmarks/normalize.ts's ratios, for a loaded machine: the
 * three variants (auto-detect, format known, the @langchain/core peer) run in ONE
 * process, alternating pass by pass over the same corpus, and each keeps its
 * fastest pass. Whatever else the machine is doing then falls on all three
 * alike, and the fastest of many passes is the closest to each one's own cost.
 * (The child-process benchmark isolates heaps better; on a quiet machine the two agree.)
 * Detection is timed the same way, twice: `detectFormat` (the fast path, then every
 * adapter when it leaves a record open) and `detectFormatFully` (every adapter asked,
 * as before the fast path), each as a share of the auto-detecting normalize that uses
 * it, so the before/after comparison comes from one run.
 *
 *   npx tsx benchmarks/normalize-interleaved.ts [--records 300] [--passes 40] [--formats openai-chat,gemini]
 */
import { RECORD_CLASSES } from "./corpus.js";
import { FORMATS, generateFormatCorpus, type Format, type FormatRecord } from "./corpus-formats.js";
import { lcAnthropic, lcConverse, lcGemini, lcOpenAI, lcResponses } from "./normalize-peer.js";
import { loadBuilt } from "./load.js";

const { normalize, detectFormat, detectFormatFully } = await loadBuilt<typeof import("../src/normalize.js")>("src/normalize.js");
const { getAdapter, fastDetect, soleResponseClaim } = await loadBuilt<typeof import("../adapters/index.js")>("adapters/index.js");

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}
const N = Number(arg("records", "300"));
const PASSES = Number(arg("passes", "40"));
const formats = arg("formats", FORMATS.join(",")).split(",") as Format[];

const PEERS: Record<Format, (r: FormatRecord) => unknown> = {
  "openai-chat": lcOpenAI,
  "anthropic-messages": lcAnthropic,
  "openai-responses": lcResponses,
  gemini: lcGemini,
  "bedrock-converse": lcConverse,
};

let sink = 0; // keeps results alive so nothing is optimised away
const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(6);
console.log(`normalize, interleaved in one process: ${N} records per (format, class), fastest of ${PASSES} passes each, CPU µs per record`);
for (const f of formats) {
  const adapter = getAdapter(f);
  if (!adapter) {
    console.log(`skipping ${f}: no "${f}" adapter is registered on this branch`);
    continue;
  }
  for (const k of RECORD_CLASSES) {
    const corpus = generateFormatCorpus(N, k, f);
    const fns = [
      (r: FormatRecord) => normalize(r.payload),
      (r: FormatRecord) => adapter.normalize(r.payload),
      PEERS[f],
      (r: FormatRecord) => getAdapter(detectFormatFully(r.payload))!.normalize(r.payload),
      (r: FormatRecord) => detectFormat(r.payload),
      (r: FormatRecord) => detectFormatFully(r.payload),
    ];
    const best = fns.map(() => Infinity);
    for (let p = 0; p < PASSES; p++) {
      for (let j = 0; j < fns.length; j++) {
        const v = (p + j) % fns.length; // rotate who goes first
        const t0 = process.cpuUsage();
        for (const rec of corpus) sink += fns[v]!(rec) ? 1 : 0;
        const d = process.cpuUsage(t0);
        best[v] = Math.min(best[v]!, (d.user + d.system) / corpus.length);
      }
    }
    const [a, kn, p, aFull, det, detFull] = best as [number, number, number, number, number, number];
    // Either fast path (chat pairs, or a pair whose response only one adapter reads) counts.
    const fast = corpus.filter((r) => (fastDetect(r.payload) ?? soleResponseClaim(r.payload)) !== undefined).length / corpus.length;
    console.log(
      `  ${f.padEnd(18)} ${k.padEnd(8)} auto ${a.toFixed(2).padStart(6)}  known ${kn.toFixed(2).padStart(6)}  peer ${p.toFixed(2).padStart(7)}   auto ratio ${(p / a).toFixed(2)}x  known ratio ${(p / kn).toFixed(2)}x` +
        `   detect share ${pct(det / a)} (fast path on ${pct(fast)})   every adapter asked: auto ratio ${(p / aFull).toFixed(2)}x, detect share ${pct(detFull / aFull)}`,
    );
  }
}
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB (all variants in one process)`);
if (sink < 0) console.log(sink);
