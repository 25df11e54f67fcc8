/**
 * Token estimation against tiktoken itself, per text shape and size, in one
 * process: countTextTokens(text, model) vs the same encoder's
 * encode_ordinary(text) (the cheapest full encode tiktoken offers: no
 * special-token scan). Each repetition runs both, alternating which goes
 * first; the table shows CPU-time medians (and min-max) over the repetitions, the
 * ratio of the medians, and how time grows per size step divided by how the
 * size grew (1.00 = linear).
 *
 * tiktoken's own cost is quadratic in its longest pre-token, so on some shapes
 * (one repeated character) it does not finish in any useful time: before each
 * size its time is predicted from the previous one (or from two small probes)
 * with the growth exponent observed, and it is skipped when the prediction
 * exceeds --budget seconds per call.
 *
 * Peak memory: each (shape, size, implementation) runs once more in a child
 * process that regenerates the same text, warms up, resets the kernel's peak
 * RSS counter (/proc/self/clear_refs) and reports how far one call raised it.
 *
 *   npx tsx benchmarks/tokens.ts [--sizes 100k,1m,4m,10m] [--reps 5] [--shapes english,csv]
 *                                [--model gpt-4o] [--budget 8] [--no-memory]
 */
import { rng } from "./corpus.js";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { loadBuilt } from "./load.js";

const { countTextTokens, encodingForModel } = await loadBuilt<typeof import("../src/tokens/index.js")>("src/tokens/index.js");
const require = createRequire(import.meta.url);
const { get_encoding } = require("tiktoken") as { get_encoding(e: string): { encode_ordinary(t: string): Uint32Array } };

function opt(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : dflt;
}
function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(s.trim());
  if (!m) throw new Error(`--sizes: cannot read "${s}" (use e.g. 100k, 1m)`);
  return Math.round(Number(m[1]) * (m[2]!.toLowerCase() === "m" ? 1e6 : m[2] ? 1e3 : 1));
}

const MODEL = opt("model", "gpt-4o");
const ENCODING = encodingForModel(MODEL);
if (!ENCODING) throw new Error(`--model ${MODEL}: not an OpenAI model, nothing to compare with tiktoken`);

// --- deterministic text shapes ------------------------------------------------------

const WORDS =
  "the of and to in is was that for it with as his on be at by had are but from or have an they which one you were all her she there would their we him been has when who will no more if out so up said what its about than into them can only other time new some could these two may first then do any like my now over such our man me even most made after also did many off before must well back through years much where your way down should because long each just state people those too how little good world very make own see men work still here old life both between under last never day us while same might great year since against come another came right used take three house use during without again place around however home small found thought went say part once general high upon school every does got united left number course war until always away something fact water though less public put think almost hand enough far took head yet government system better set told nothing night end why called didn asked later knew point".split(
    " ",
  );
const IDENTS = [
  "request",
  "response",
  "payload",
  "items",
  "index",
  "config",
  "client",
  "result",
  "error",
  "value",
  "options",
  "handler",
  "buffer",
  "stream",
  "count",
  "user",
  "tokens",
  "message",
];

type Shape = (n: number, r: () => number) => string;
const pick = <T>(xs: readonly T[], r: () => number): T => xs[Math.floor(r() * xs.length)]!;
function build(n: number, next: () => string): string {
  const parts: string[] = [];
  let len = 0;
  while (len < n) {
    const s = next();
    parts.push(s);
    len += s.length;
  }
  return parts.join("").slice(0, n);
}
function randomBytes(n: number, r: () => number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

const SHAPES: Record<string, Shape> = {
  english: (n, r) =>
    build(n, () => {
      const words = Array.from({ length: 8 + Math.floor(r() * 14) }, () => pick(WORDS, r));
      words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
      return `${words.join(" ")}${r() < 0.15 ? ".\n\n" : r() < 0.3 ? ", " : ". "}`;
    }),
  code: (n, r) =>
    build(n, () => {
      const ind = "  ".repeat(Math.floor(r() * 4));
      const a = pick(IDENTS, r);
      const b = pick(IDENTS, r);
      return pick(
        [
          `${ind}const ${a}${Math.floor(r() * 100)} = await ${b}.get(${JSON.stringify(a)}, { timeout: ${Math.floor(r() * 9000)} });\n`,
          `${ind}if (${a}.length > ${Math.floor(r() * 64)} && !${b}) {\n`,
          `${ind}}\n`,
          `${ind}for (const ${a[0]} of ${b}) ${a}.push(${a[0]}?.${pick(IDENTS, r)} ?? null);\n`,
          `${ind}// ${pick(WORDS, r)} ${pick(WORDS, r)} ${pick(WORDS, r)}\n`,
        ],
        r,
      );
    }),
  csv: (n, r) =>
    build(
      n,
      () =>
        `${Math.floor(r() * 1e6)},${pick(IDENTS, r)}_${pick(IDENTS, r)},${(r() * 1000).toFixed(4)},2025-${String(1 + Math.floor(r() * 12)).padStart(2, "0")}-${String(1 + Math.floor(r() * 28)).padStart(2, "0")}T${String(Math.floor(r() * 24)).padStart(2, "0")}:00:00Z,${r() < 0.5 ? "ok" : "failed"}\n`,
    ),
  base64: (n, r) =>
    randomBytes(Math.ceil((n * 3) / 4), r)
      .toString("base64")
      .slice(0, n),
  "base64-76": (n, r) =>
    randomBytes(Math.ceil((n * 3) / 4), r)
      .toString("base64")
      .replace(/.{76}/g, "$&\n")
      .slice(0, n),
  repeated: (n) => "a".repeat(n),
  random: (n, r) => randomBytes(n, r).toString("latin1"),
  cjk: (n, r) =>
    build(n, () => {
      let s = "";
      const len = 20 + Math.floor(r() * 400);
      for (let i = 0; i < len; i++) s += r() < 0.06 ? pick(["，", "。", "、"], r) : String.fromCharCode(0x4e00 + Math.floor(r() * 0x51a0));
      return `${s}。\n`;
    }),
};

function text(shape: string, n: number): string {
  const s = SHAPES[shape];
  if (!s) throw new Error(`unknown shape "${shape}"; shapes: ${Object.keys(SHAPES).join(", ")}`);
  return s(n, rng(n ^ shape.length));
}

// --- child mode: one call, peak RSS ----------------------------------------------------
function vm(field: "VmHWM" | "VmRSS"): number {
  const m = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
}

if (process.argv.includes("--child")) {
  const [shape, size, which] = process.argv.slice(process.argv.indexOf("--child") + 1);
  const t = text(shape!, Number(size));
  const e = get_encoding(ENCODING);
  const run = which === "ours" ? () => countTextTokens(t, MODEL) : () => e.encode_ordinary(t).length;
  countTextTokens(t.slice(0, 10_000), MODEL);
  e.encode_ordinary(t.slice(0, 10_000));
  (globalThis as { gc?: () => void }).gc?.();
  writeFileSync("/proc/self/clear_refs", "5");
  const before = vm("VmRSS");
  run();
  process.stdout.write(JSON.stringify({ peak: vm("VmHWM") - before }));
  process.exit(0);
}

function peakOf(shape: string, n: number, which: "ours" | "tiktoken"): number | undefined {
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", ...process.execArgv, process.argv[1]!, "--model", MODEL, "--child", shape, String(n), which],
    { encoding: "utf8", maxBuffer: 1 << 20 },
  );
  try {
    return (JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { peak: number }).peak;
  } catch {
    return undefined;
  }
}

// --- the timed runs ------------------------------------------------------------------
const SIZES = opt("sizes", "100k,1m,4m,10m").split(",").map(parseSize);
const REPS = Number(opt("reps", "5"));
const BUDGET_MS = Number(opt("budget", "8")) * 1000;
const MEMORY = !process.argv.includes("--no-memory");
const shapes = opt("shapes", Object.keys(SHAPES).join(",")).split(",");
const enc = get_encoding(ENCODING);

// CPU time of the process (user + system) over the call: on a shared machine it
// counts the work done, not the time spent waiting for a core.
const time = (f: () => unknown): number => {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const mb = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? "?" : (Math.max(0, x) / 1e6).toFixed(1));
const label = (n: number) => (n >= 1e6 ? `${n / 1e6} MB` : `${n / 1e3} KB`);

console.log(`model ${MODEL} (${ENCODING}); ${REPS} repetitions per size; CPU ms per call, median [min-max]; sizes in characters`);
console.log("growth = time ratio to the previous size / size ratio (1.00 = linear); peak = RSS a single call adds, in MB\n");
console.log(
  ["shape", "size", "ours ms", "tiktoken ms", "ratio", "growth ours", "growth tk", "tokens ours/tk", "peak ours", "peak tk"].join("\t"),
);

const summary: { shape: string; size: number; ratio?: number }[] = [];
for (const shape of shapes) {
  // Warm both up on this shape (JIT, encoder load, WASM memory growth for small inputs).
  const warm = text(shape, 20_000);
  countTextTokens(warm, MODEL);
  // Two small probes give tiktoken's growth exponent on this shape before any large call.
  const probe = (n: number) => Math.min(...[0, 1, 2].map(() => time(() => enc.encode_ordinary(text(shape, n)))));
  const p1 = probe(4_000);
  const p2 = probe(16_000);
  let tkPrev: { n: number; t: number } | undefined = { n: 16_000, t: p2 };
  const exponent = Math.max(1, Math.log(Math.max(p2, 1e-3) / Math.max(p1, 1e-3)) / Math.log(4));
  let prev: { n: number; ours: number; tk?: number } | undefined;
  for (const n of SIZES) {
    const t = text(shape, n);
    const predicted: number = tkPrev ? tkPrev.t * (n / tkPrev.n) ** exponent : Infinity;
    const runTk: boolean = predicted <= BUDGET_MS;
    countTextTokens(t, MODEL); // untimed: flattens the string and warms this size's allocations for both sides
    const ours: number[] = [];
    const tk: number[] = [];
    let oursTokens = 0;
    let tkTokens = 0;
    for (let r = 0; r < REPS; r++) {
      const a = () => ours.push(time(() => (oursTokens = countTextTokens(t, MODEL))));
      const b = () => runTk && tk.push(time(() => (tkTokens = enc.encode_ordinary(t).length)));
      if (r % 2) {
        b();
        a();
      } else {
        a();
        b();
      }
    }
    const mo = median(ours);
    const mt: number | undefined = runTk ? median(tk) : undefined;
    if (mt !== undefined) tkPrev = { n, t: mt };
    const growth = (cur: number | undefined, old: number | undefined, oldN: number | undefined) =>
      cur !== undefined && old !== undefined && oldN ? (cur / old / (n / oldN)).toFixed(2) : "-";
    summary.push({ shape, size: n, ratio: mt === undefined ? undefined : mo / mt });
    console.log(
      [
        shape,
        label(n),
        `${ms(mo)} [${ms(Math.min(...ours))}-${ms(Math.max(...ours))}]`,
        mt === undefined
          ? `skipped (predicted ${(predicted / 1000).toFixed(0)} s/call)`
          : `${ms(mt)} [${ms(Math.min(...tk))}-${ms(Math.max(...tk))}]`,
        mt === undefined ? "-" : `${(mo / mt).toFixed(2)}x`,
        growth(mo, prev?.ours, prev?.n),
        growth(mt, prev?.tk, prev?.n),
        mt === undefined ? `${oursTokens}/-` : `${oursTokens}/${tkTokens} (${(((oursTokens - tkTokens) / tkTokens) * 100).toFixed(2)}%)`,
        MEMORY ? mb(peakOf(shape, n, "ours")) : "-",
        MEMORY && runTk ? mb(peakOf(shape, n, "tiktoken")) : "-",
      ].join("\t"),
    );
    prev = { n, ours: mo, tk: mt };
  }
}

const ratios = summary.filter((s) => s.ratio !== undefined).map((s) => s.ratio!);
const worst = summary.reduce((w, s) => (s.ratio !== undefined && (w.ratio === undefined || s.ratio > w.ratio) ? s : w), summary[0]!);
if (ratios.length)
  console.log(
    `\nratio ours/tiktoken where tiktoken ran: median ${median(ratios).toFixed(2)}x, worst ${worst.ratio!.toFixed(2)}x (${worst.shape} ${label(worst.size)})`,
  );
