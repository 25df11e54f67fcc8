import { describe, expect, it } from "vitest";
import { cleanupAfterEach } from "../helpers/cleanup.js";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { type Running, sql } from "../helpers/collector.js";
import { startProxy, type Verdict } from "../helpers/proxy.js";
import { makeRun, tempDir } from "../helpers/runs.js";

const { cleanup, collector } = cleanupAfterEach();

/** A proxy in front of the collector that answers `status` while `down()` says so. */
async function faultyProxy(col: Running, down: () => boolean, status = 503) {
  const p = await startProxy(col.url, (): Verdict => (down() ? { status } : "pass"));
  cleanup.push(() => p.close());
  return p;
}

function client(endpoint: string, opts: ConstructorParameters<typeof Client>[0] = {}): Client {
  const dir = tempDir("tp-spool-");
  const c = new Client({
    endpoint,
    apiKey: "k",
    spoolDir: join(dir, "spool"),
    deadLetterPath: join(dir, "dead.jsonl"),
    exitHooks: false,
    backoff: { baseMs: 10, maxMs: 100 },
    warn: () => {},
    ...opts,
  });
  cleanup.push(async () => void (await c.shutdown({ timeoutMs: 2000 })));
  return c;
}

async function until(cond: () => boolean, tries = 200): Promise<void> {
  for (let i = 0; i < tries && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
}

function distinct(col: Running, project: string): { n: number; d: number } {
  return sql(col.collector.store)
    .prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM runs WHERE session_name = ?")
    .get(project) as { n: number; d: number };
}

describe("spooled runs not yet due", () => {
  it("are replayed by a Client started meanwhile once they are due, each exactly once, and counted undelivered until then", async () => {
    const col = await collector();
    let down = true;
    const proxy = await faultyProxy(col, () => down);
    const spoolDir = join(tempDir("tp-due-"), "spool");
    const a = client(proxy.url, { spoolDir, maxAttempts: 1, backoff: { baseMs: 10, maxMs: 1500 } });
    for (let i = 0; i < 300; i++) a.createRun(makeRun("not-due"));
    const first = await a.shutdown();
    expect(first).toMatchObject({ ok: false, spooled: 300, pending: 0 });
    down = false;
    const b = client(proxy.url, { spoolDir });
    const early = await b.flush();
    expect(early.spooled).toBe(300); // not due yet: still undelivered, and said so
    expect(b.stats.inSpool).toBe(300);
    await until(() => distinct(col, "not-due").n === 300); // no flush(): the due-time timer replays them
    expect(distinct(col, "not-due")).toEqual({ n: 300, d: 300 });
    expect(await b.flush()).toMatchObject({ ok: true, spooled: 0 });
  });
});

describe("unwritable spool and dead-letter paths", () => {
  it("falls back to a spool under os.tmpdir() when the configured one cannot be created, and replays from it", async () => {
    const col = await collector();
    let down = true;
    const proxy = await faultyProxy(col, () => down);
    const warnings: string[] = [];
    const spoolDir = join(tempDir("tp-ro-"), "file-not-dir");
    // A regular file where the spool's parent directory should be: mkdir fails with ENOTDIR, like a read-only root.
    const blocked = join(spoolDir, "spool");
    await import("node:fs").then((fs) => fs.writeFileSync(spoolDir, "x"));
    const a = client(proxy.url, { spoolDir: blocked, maxAttempts: 1, backoff: { baseMs: 10, maxMs: 10 }, warn: (m) => warnings.push(m) });
    for (let i = 0; i < 40; i++) a.createRun(makeRun("fallback"));
    const r = await a.shutdown();
    expect(r).toMatchObject({ spooled: 40, dropped: 0 });
    expect(warnings.filter((w) => w.includes("is not writable"))).toHaveLength(1);
    const used = /using (\S+)$/.exec(warnings.find((w) => w.includes("is not writable"))!)![1]!;
    expect(used.startsWith(tmpdir())).toBe(true);
    expect(readdirSync(used).some((n) => n.startsWith("segment-"))).toBe(true);
    down = false;
    const b = client(proxy.url, { spoolDir: blocked });
    await until(() => distinct(col, "fallback").n === 40);
    expect(await b.flush()).toMatchObject({ ok: true, spooled: 0 });
    expect(distinct(col, "fallback")).toEqual({ n: 40, d: 40 });
  });

  it("counts runs as dropped, warns once and does not spin when no spool directory works", async () => {
    const col = await collector();
    const proxy = await faultyProxy(col, () => true);
    const warnings: string[] = [];
    const saved = process.env.TMPDIR;
    const base = join(tempDir("tp-nowhere-"), "f");
    await import("node:fs").then((fs) => fs.writeFileSync(base, "x"));
    process.env.TMPDIR = join(base, "tmp"); // the fallback is unusable too
    let c: Client;
    try {
      c = new Client({
        endpoint: proxy.url,
        apiKey: "k",
        spoolDir: join(base, "spool"),
        deadLetterPath: join(base, "dead.jsonl"),
        exitHooks: false,
        maxAttempts: 2,
        backoff: { baseMs: 10, maxMs: 100 },
        warn: (m) => warnings.push(m),
      });
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    cleanup.push(async () => void (await c.shutdown({ timeoutMs: 2000 })));
    for (let i = 0; i < 50; i++) c.createRun(makeRun("nowhere"));
    const r = await c.flush({ timeoutMs: 10_000 });
    expect(r).toMatchObject({ ok: false, timedOut: false, dropped: 50, spooled: 0 });
    expect(c.stats.dropped).toBe(50);
    expect(c.stats.requests).toBe(2); // one batch, two attempts: no loop
    expect(warnings.filter((w) => w.includes("no writable spool directory"))).toHaveLength(1);
    // Memory pressure with nowhere to spill: dropped and counted, never thrown.
    const tiny = client(proxy.url, { spoolDir: join(base, "spool2"), maxQueueBytes: 1, maxAttempts: 1 });
    expect(() => tiny.createRun(makeRun("nowhere"))).not.toThrow();
  });

  it("writes refused runs to a dead-letter file under os.tmpdir() when the configured one is unusable", async () => {
    const col = await collector();
    const proxy = await faultyProxy(col, () => true, 422);
    const dir = tempDir("tp-dl-");
    await import("node:fs").then((fs) => fs.writeFileSync(join(dir, "f"), "x"));
    const warnings: string[] = [];
    const c = client(proxy.url, { deadLetterPath: join(dir, "f", "dead.jsonl"), warn: (m) => warnings.push(m) });
    const run = makeRun("dead");
    c.createRun(run);
    const r = await c.flush();
    expect(r).toMatchObject({ deadLettered: 1, dropped: 0 });
    const used = /using (\S+)$/.exec(warnings.find((w) => w.includes("dead-letter file"))!)![1]!;
    expect(existsSync(used)).toBe(true);
    expect(readFileSync(used, "utf8")).toContain(run.id);
  });
});

describe("flush and shutdown with a timeout", () => {
  it("flush({timeoutMs}) returns with the endpoint down; shutdown({timeoutMs}) spools the rest and the next Client delivers each run once", async () => {
    const col = await collector();
    let down = true;
    const proxy = await faultyProxy(col, () => down);
    const spoolDir = join(tempDir("tp-timeout-"), "spool");
    const a = client(proxy.url, { spoolDir, backoff: { baseMs: 200, maxMs: 5000 } });
    for (let i = 0; i < 120; i++) a.createRun(makeRun("timeout"));
    const f = await a.flush({ timeoutMs: 300 });
    expect(f).toMatchObject({ ok: false, timedOut: true, pending: 120 });
    const s = await a.shutdown({ timeoutMs: 100 });
    expect(s).toMatchObject({ ok: false, timedOut: true, pending: 0, spooled: 120 });
    down = false;
    const b = client(proxy.url, { spoolDir });
    expect(await b.flush()).toMatchObject({ ok: true, spooled: 0 });
    // the batch that was in flight at shutdown may also retry; the store is idempotent by id
    await new Promise((r) => setTimeout(r, 300));
    expect(distinct(col, "timeout").d).toBe(120);
    expect(distinct(col, "timeout").n).toBe(120);
  });
});

describe("a process killed with runs spilled to the spool", () => {
  it("leaves them in its open segment, and the next Client replays each exactly once", async () => {
    const { spawn } = await import("node:child_process");
    const { fileURLToPath } = await import("node:url");
    const col = await collector();
    const spoolDir = join(tempDir("tp-kill-"), "spool");
    const script = fileURLToPath(new URL("./fixtures/spill-child.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", script, col.url, spoolDir, "400", "killed"], { stdio: "ignore" });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, sig) => resolve(sig)));
    expect(signal).toBe("SIGKILL");
    expect(readdirSync(spoolDir).some((n) => n.endsWith(".jsonl.open"))).toBe(true);
    const c = client(col.url, { spoolDir });
    expect((await c.flush()).ok).toBe(true);
    expect(distinct(col, "killed")).toEqual({ n: 400, d: 400 });
    const v = sql(col.collector.store)
      .prepare("SELECT COUNT(*) AS n FROM runs WHERE session_name = 'killed' AND json_extract(outputs, '$.v') IS NOT NULL")
      .get() as { n: number };
    expect(v.n).toBe(200);
  });
});

describe("segments written by an earlier version", () => {
  it("are counted and replayed (names without a sequence or a count)", async () => {
    const { mkdirSync, writeFileSync } = await import("node:fs");
    const col = await collector();
    const spoolDir = join(tempDir("tp-old-"), "spool");
    mkdirSync(spoolDir, { recursive: true });
    const runs = Array.from({ length: 25 }, () => makeRun("old-names"));
    writeFileSync(
      join(spoolDir, `segment-${Date.now() - 1000}-99999999-0badcafe.jsonl`),
      runs.map((r) => JSON.stringify({ kind: "post", id: r.id, run: r }) + "\n").join(""),
    );
    const { Spool } = await import("../../src/ingest/spool.js");
    expect(new Spool(spoolDir).pendingOps()).toBe(25);
    const c = client(col.url, { spoolDir });
    expect(await c.flush()).toMatchObject({ ok: true, spooled: 0 });
    expect(distinct(col, "old-names")).toEqual({ n: 25, d: 25 });
  });
});
