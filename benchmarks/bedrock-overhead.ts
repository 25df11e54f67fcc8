/**
 * wrapBedrock overhead: what tracing adds to a Converse call and to each
 * ConverseStream event, over the same real BedrockRuntimeClient (default
 * HTTP/2 handler) talking to the same fake Bedrock (benchmarks/bedrock-upstream.ts,
 * its own process), the runs delivered to the capture server (its own process).
 * No other library traces Bedrock's client, so the peer is the unwrapped client:
 * the ratio printed is traced / unwrapped, with the added µs per call and per
 * event. Short blocks interleaved in a rotating order over many rounds; each
 * block ends by draining the tracer, so delivery CPU is charged to it. Figures
 * are medians over rounds with the interquartile range.
 *
 * Two transports: the SDK's default HTTP/2 handler to the fake Bedrock (what
 * an application runs), then an in-memory request handler answering the same
 * bytes (the SDK's own extension point), which takes the loopback network and
 * the other process out, so the CPU figures hold only the client and the tracer.
 *
 *   npm run build && npx tsx benchmarks/bedrock-overhead.ts [--quick]
 */
import { existsSync, mkdtempSync } from "node:fs";
import { connect } from "node:http2";
import { Readable } from "node:stream";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, type Message } from "@aws-sdk/client-bedrock-runtime";
import { cpuMs, median, quantile, startChild } from "./stats.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 10 : 30;
const CALLS = 20;
const STREAMS = 8;
const EVENTS = 200;

const dist = join(root, "dist/src/index.js");
if (!existsSync(dist)) {
  console.error("benchmarks/bedrock-overhead.ts measures compiled code: run `npm run build` first");
  process.exit(2);
}
const capture = await startChild([join(root, "benchmarks/capture-server.ts")]);
const upstream = await startChild([join(root, "benchmarks/bedrock-upstream.ts"), String(EVENTS)]);
const tp = (await import(dist)) as typeof import("../src/index.js");

const spool = mkdtempSync(join(tmpdir(), "tp-bench-bedrock-"));
const tpClient = new tp.Client({
  endpoint: capture.url,
  apiKey: "bedrock-tracepipe",
  project: "bedrock-tracepipe",
  spoolDir: join(spool, "spool"),
  deadLetterPath: join(spool, "dl.jsonl"),
  exitHooks: false,
});
const names = ["unwrapped", "tracepipe"] as const;
type Name = (typeof names)[number];
const drain: Record<Name, () => Promise<void>> = { unwrapped: async () => {}, tracepipe: async () => void (await tpClient.flush()) };

// The in-memory transport answers what the fake Bedrock answers, fetched from it once.
async function fetched(path: string): Promise<Buffer> {
  const session = connect(upstream.url);
  const req = session.request({ ":method": "POST", ":path": path });
  req.end("{}");
  const chunks: Buffer[] = [];
  for await (const ch of req) chunks.push(ch as Buffer);
  session.close();
  return Buffer.concat(chunks);
}
const converseBytes = await fetched("/model/m/converse");
const streamBytes = await fetched("/model/m/converse-stream");
const inMemory = {
  handle: async (req: { path: string }) => {
    const stream = req.path.endsWith("/converse-stream");
    return {
      response: {
        statusCode: 200,
        headers: { "content-type": stream ? "application/vnd.amazon.eventstream" : "application/json" },
        body: Readable.from([stream ? streamBytes : converseBytes]),
      },
    };
  },
};
const client = (memory: boolean) =>
  new BedrockRuntimeClient({
    region: "us-east-1",
    endpoint: upstream.url,
    credentials: { accessKeyId: "AKIDBENCH", secretAccessKey: "bench" },
    maxAttempts: 1,
    ...(memory ? { requestHandler: inMemory as never } : {}),
  });
const modelId = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const messages: Message[] = [{ role: "user", content: [{ text: "What is the capital of France? Answer in one sentence." }] }];
const system = [{ text: "You are a terse geography assistant." }];

async function oneCall(c: BedrockRuntimeClient): Promise<number> {
  const t = performance.now();
  const r = await c.send(new ConverseCommand({ modelId, messages, system, inferenceConfig: { temperature: 0 } }));
  if (!r.output?.message) throw new Error("no message");
  return performance.now() - t;
}
async function oneStream(c: BedrockRuntimeClient): Promise<number> {
  const t = performance.now();
  const r = await c.send(new ConverseStreamCommand({ modelId, messages, system }));
  let n = 0;
  for await (const _ of r.stream!) n++;
  if (n !== EVENTS) throw new Error(`expected ${EVENTS} events, got ${n}`);
  return performance.now() - t;
}

type Round = { call: number; stream: number; cpuCall: number; cpuStream: number };

async function measure(transport: string, variants: Record<Name, BedrockRuntimeClient>): Promise<void> {
  const rounds: Record<Name, Round[]> = { unwrapped: [], tracepipe: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + round) % names.length]!;
      const c = variants[name];
      const calls: number[] = [];
      let cpu = cpuMs();
      for (let i = 0; i < CALLS; i++) calls.push(await oneCall(c));
      await drain[name]();
      const cpuCall = ((cpuMs() - cpu) * 1000) / CALLS;
      const streams: number[] = [];
      cpu = cpuMs();
      for (let i = 0; i < STREAMS; i++) streams.push(await oneStream(c));
      await drain[name]();
      const cpuStream = ((cpuMs() - cpu) * 1000) / STREAMS;
      if (round > 0) rounds[name].push({ call: median(calls) * 1000, stream: median(streams) * 1000, cpuCall, cpuStream });
    }
  }
  const u = rounds.unwrapped;
  const t = rounds.tracepipe;
  const iqr = (xs: number[], d: number) =>
    `${median(xs).toFixed(d)} (IQR ${quantile(xs, 0.25).toFixed(d)}–${quantile(xs, 0.75).toFixed(d)})`;
  const metrics: [string, (r: Round) => number, number][] = [
    ["latency per call, µs", (r) => r.call, 0],
    ["latency per event, µs", (r) => r.stream / EVENTS, 2],
    ["CPU per call, µs", (r) => r.cpuCall, 0],
    ["CPU per event, µs", (r) => r.cpuStream / EVENTS, 2],
  ];
  console.log(`  ${transport}:`);
  for (const [label, f, d] of metrics) {
    const added = t.map((r, i) => f(r) - f(u[i]!));
    const ratio = median(t.map(f)) / median(u.map(f));
    console.log(
      `    ${label.padEnd(22)} unwrapped ${median(u.map(f)).toFixed(d).padStart(8)}   added by tracing ${iqr(added, d)}   -> traced/unwrapped ${ratio.toFixed(2)}x`,
    );
  }
  // A stream's own fixed cost (one run, its messages, delivery) is a call's: what is left per event is the fold.
  const marginal = t.map((r, i) => (r.cpuStream - u[i]!.cpuStream - (r.cpuCall - u[i]!.cpuCall)) / EVENTS);
  console.log(`    CPU per event beyond the per-call cost ((stream added - call added) / ${EVENTS}): ${iqr(marginal, 2)} µs`);
}

console.log(
  `wrapBedrock overhead (compiled code): BedrockRuntimeClient; fake Bedrock ${upstream.url}; runs -> capture server ${capture.url} (own processes)`,
);
console.log(
  `  ${ROUNDS} rounds x (${CALLS} Converse calls + ${STREAMS} ConverseStream calls of ${EVENTS} events) per variant and transport, rotating order; round 0 is warm-up`,
);
await measure("HTTP/2 to the fake Bedrock", { unwrapped: client(false), tracepipe: tp.wrapBedrock(client(false), { client: tpClient }) });
await measure("in-memory request handler", { unwrapped: client(true), tracepipe: tp.wrapBedrock(client(true), { client: tpClient }) });
await tpClient.shutdown();
const count = ((await (await fetch(`${capture.url}/count?key=bedrock-tracepipe`)).json()) as { runs: number }).runs;
console.log(`  runs at the server: ${count}/${2 * (ROUNDS + 1) * (CALLS + STREAMS)}`);
capture.proc.kill("SIGTERM");
upstream.proc.kill("SIGTERM");
