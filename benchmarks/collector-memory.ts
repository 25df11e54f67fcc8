/**
 * Peak memory of `tracepipe serve` per large multipart request (issue 13 item 13).
 *
 * Each scenario starts a fresh `serve` child process (file-backed SQLite, rate
 * limits off), warms it with one small request, resets its peak RSS to the
 * current RSS, sends the load, and reports how far the peak (VmHWM in
 * /proc/<pid>/status) rose above that:
 *   - one request whose `post.{id}.inputs` part is ~60 MB of chat messages;
 *   - 8 such requests at once (the default 4 large-body slots admit 4).
 * Two shapes of inputs: `messages` (~1 KB chat messages, which the store also
 * normalizes: string contents become text parts) and `string` (one long
 * string value, nothing to normalize). Two framings of the parts: `field`
 * (no filename: plain form fields, as tracepipe's client sends parts up to 1 MiB) and `file` (filename="blob",
 * as FormData Blobs and so the langsmith SDK send them): busboy reads the two
 * differently.
 * Then, per shape, the cost of a small patch (an end time) to a run stored
 * with a ~60 MB inputs field: what merging into a large stored row costs.
 * Every request must answer 202; the figure is the median (min–max) over reps,
 * beside the body size, so "near the body size" can be read off directly.
 *
 *   npx tsx benchmarks/collector-memory.ts [--mb 60] [--reps 2] [--shape messages|string] [--framing field|file] [--concurrency 1,8]
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, spread, startChild } from "./stats.js";

const root = fileURLToPath(new URL("../", import.meta.url));

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

// Child mode: this file runs the real CLI's `serve` command, so the process measured is the collector alone.
if (process.argv[2] === "--serve") {
  const { main } = await import("../src/cli/index.js");
  await main([process.execPath, "tracepipe", "serve", "--port", "0", "--db", process.argv[3]!, "--no-rate-limit"]);
} else {
  await run();
}

function statusMiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no ${field} in /proc (Linux only)`);
  return Number(m[1]) / 1024;
}
function hwmMiB(pid: number): number {
  return statusMiB(pid, "VmHWM");
}

/**
 * The baseline of a phase: the peak is reset to the current RSS (writing 5 to
 * /proc/<pid>/clear_refs), so a phase is measured from where the process is
 * now, not from an earlier, higher peak. Where that is not allowed, the peak so far.
 */
function resetPeak(pid: number): number {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return statusMiB(pid, "VmRSS");
  } catch {
    return hwmMiB(pid);
  }
}

function startServe(db: string): Promise<{ proc: ChildProcess; url: string }> {
  return startChild([fileURLToPath(import.meta.url), "--serve", db], { cwd: root });
}

type Shape = "messages" | "string";
type Framing = "field" | "file";

/** A multipart body for one llm run whose inputs part is about `bytes` of JSON. */
function body(bytes: number, shape: Shape, framing: Framing, id = randomUUID()): { boundary: string; data: Buffer } {
  const head = {
    id,
    trace_id: id,
    dotted_order: `20261123T000000000000Z${id}`,
    name: "big",
    run_type: "llm",
    start_time: "2026-11-23T00:00:00Z",
    session_name: "memory",
  };
  const content = "x".repeat(1000);
  const n = Math.ceil(bytes / (content.length + 40));
  const inputs =
    shape === "string"
      ? { text: "y".repeat(bytes) }
      : { messages: Array.from({ length: n }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content })) };
  const boundary = `----tp${randomUUID()}`;
  const file = framing === "file" ? '; filename="blob"' : "";
  const part = (name: string, json: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file}\r\nContent-Type: application/json\r\n\r\n${json}\r\n`;
  const text = part(`post.${id}`, JSON.stringify(head)) + part(`post.${id}.inputs`, JSON.stringify(inputs)) + `--${boundary}--\r\n`;
  return { boundary, data: Buffer.from(text, "utf8") };
}

async function send(url: string, b: { boundary: string; data: Buffer }): Promise<void> {
  const res = await fetch(`${url}/runs/multipart`, {
    method: "POST",
    headers: { "content-type": `multipart/form-data; boundary=${b.boundary}` },
    body: b.data,
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`${res.status}: ${text.slice(0, 300)}`);
}

async function scenario(
  concurrent: number,
  bytes: number,
  shape: Shape,
  framing: Framing,
): Promise<{ delta: number; base: number; bodyMiB: number }> {
  const dir = mkdtempSync(join(tmpdir(), "tp-mem-"));
  const bodies = Array.from({ length: concurrent }, () => body(bytes, shape, framing));
  const { proc, url } = await startServe(join(dir, "runs.db"));
  try {
    await send(url, body(64 * 1024, shape, framing)); // every code path loaded before the baseline
    await new Promise((r) => setTimeout(r, 300));
    const base = resetPeak(proc.pid!);
    await Promise.all(bodies.map((b) => send(url, b)));
    return { delta: hwmMiB(proc.pid!) - base, base, bodyMiB: bodies[0]!.data.length / 1024 / 1024 };
  } finally {
    proc.kill("SIGTERM");
    await new Promise((r) => proc.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Peak RSS rise of an end-time patch to a run already stored with a large inputs field. */
async function patchScenario(bytes: number, shape: Shape): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "tp-mem-"));
  const id = randomUUID();
  const big = body(bytes, shape, "field", id);
  const { proc, url } = await startServe(join(dir, "runs.db"));
  try {
    await send(url, big);
    await new Promise((r) => setTimeout(r, 300));
    const base = resetPeak(proc.pid!);
    const res = await fetch(`${url}/runs/${id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ end_time: "2026-11-23T00:00:01Z" }),
    });
    if (res.status !== 202) throw new Error(`patch: ${res.status} ${await res.text()}`);
    return hwmMiB(proc.pid!) - base;
  } finally {
    proc.kill("SIGTERM");
    await new Promise((r) => proc.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function run(): Promise<void> {
  const MB = arg("mb", 60);
  const REPS = arg("reps", 2);
  const shapes: Shape[] = process.argv.includes("--shape")
    ? [process.argv[process.argv.indexOf("--shape") + 1] as Shape]
    : ["messages", "string"];
  const concurrency = process.argv.includes("--concurrency")
    ? process.argv[process.argv.indexOf("--concurrency") + 1]!.split(",").map(Number)
    : [1, 8];
  const framings: Framing[] = process.argv.includes("--framing")
    ? [process.argv[process.argv.indexOf("--framing") + 1] as Framing]
    : ["field", "file"];
  for (const shape of shapes) {
    for (const [framing, concurrent] of framings.flatMap((f) => concurrency.map((n) => [f, n] as const))) {
      const deltas: number[] = [];
      let bodyMiB = 0;
      let base = 0;
      for (let r = 0; r < REPS; r++) {
        const s = await scenario(concurrent, MB * 1000 * 1000, shape, framing);
        deltas.push(s.delta);
        bodyMiB = s.bodyMiB;
        base = s.base;
      }
      console.log(
        `${shape}, parts as ${framing}s: ${concurrent} x ${bodyMiB.toFixed(1)} MiB multipart: peak RSS +${spread(deltas, 0, " MiB")} over a ${base.toFixed(0)} MiB baseline (${(median(deltas) / (bodyMiB * concurrent)).toFixed(2)}x the bytes sent, ${(median(deltas) / bodyMiB).toFixed(2)}x one body)`,
      );
    }
    const patches: number[] = [];
    for (let r = 0; r < REPS; r++) patches.push(await patchScenario(MB * 1000 * 1000, shape));
    console.log(`${shape}: end-time patch to a stored ${MB} MB run: peak RSS +${spread(patches, 0, " MiB")}`);
  }
}
