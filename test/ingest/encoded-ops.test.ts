/**
 * Complete runs held encoded in the queue (ops.ts encodedOp), and the batch
 * size taken from GET /info when none is set. Against the real collector over
 * loopback, with a scripted proxy where requests are counted.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client, type Sink } from "../../src/ingest/index.js";
import { encodeMultipart, encodeRun, encodeRunBytes, INLINE_MAX } from "../../src/ingest/multipart.js";
import { encodedOp, mergeOps, patchOp, postOp, released, type Op } from "../../src/ingest/ops.js";
import { cleanupAfterEach } from "../helpers/cleanup.js";
import { startProxy } from "../helpers/proxy.js";
import { makeRun, tempDir } from "../helpers/runs.js";

const { cleanup, collector } = cleanupAfterEach();

function client(endpoint: string, extra: ConstructorParameters<typeof Client>[0] = {}): Client {
  const dir = tempDir("tp-encoded-");
  const c = new Client({
    endpoint,
    apiKey: "test-key",
    spoolDir: join(dir, "spool"),
    deadLetterPath: join(dir, "dead.jsonl"),
    backoff: { baseMs: 5, maxMs: 50 },
    warn: () => {},
    ...extra,
  });
  cleanup.push(async () => void (await c.shutdown()));
  return c;
}

/** A complete run (it has an end time): what a span or a backfilled record becomes. */
function completeRun(project: string, extra: Record<string, unknown> = {}): Record<string, unknown> & { id: string } {
  return Object.assign(makeRun(project, 400), {
    end_time: "2026-11-22T10:15:01.000000Z",
    outputs: { messages: [{ role: "assistant", content: [{ type: "text", text: "héllo ✓ 𝄞" }] }] },
    extra: { metadata: { k: "v" } },
    ...extra,
  });
}

/** Bodies of POST /runs/multipart, and a GET /info that advertises `sizeLimit`. */
async function captureServer(
  sizeLimit?: number,
): Promise<{ url: string; bodies: { body: Buffer; contentType: string }[]; close(): Promise<void> }> {
  const bodies: { body: Buffer; contentType: string }[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.url === "/info") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ batch_ingest_config: sizeLimit === undefined ? {} : { size_limit: sizeLimit } }));
      return;
    }
    bodies.push({ body: Buffer.concat(chunks), contentType: String(req.headers["content-type"]) });
    res.writeHead(202, { "content-type": "application/json" });
    res.end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const close = () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections()));
  cleanup.push(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, close };
}

const boundaryOf = (contentType: string) => contentType.split("boundary=")[1]!;
/** A body with its boundary replaced, so two encodings of the same ops compare equal. */
const normalized = (b: { body: Buffer; contentType: string }) =>
  b.body.toString("latin1").replaceAll(boundaryOf(b.contentType), "BOUNDARY");

describe("encodedOp: a complete run held as its multipart text", () => {
  it("encodes complete creates only, and gives back the same run when asked for it", () => {
    const run = completeRun("unit", { inputs: { text: "y".repeat(INLINE_MAX * 2) } }); // inputs in a part of their own
    const op = encodedOp(postOp(run), encodeRunBytes);
    expect(op.encoded?.fields).toEqual(["inputs"]);
    expect(op.run).toEqual(JSON.parse(JSON.stringify(run)));
    // Whoever read the object may change it: the text is dropped, and the op encodes from the object again.
    expect(op.encoded).toBeUndefined();
    (op.run as Record<string, unknown>).name = "changed";
    expect(JSON.parse(encodeRun(op.run).part).name).toBe("changed");

    const open = makeRun("unit"); // no end time: an update is expected to merge into it
    expect(encodedOp(postOp(open), encodeRunBytes).encoded).toBeUndefined();
    expect(encodedOp(patchOp(run.id, { end_time: "2026-11-22T10:16:00Z" }), encodeRunBytes).encoded).toBeUndefined();
    expect(
      encodedOp(
        patchOp(run.id, { end_time: "2026-11-22T10:16:00Z" }, undefined, () => {}),
        encodeRunBytes,
      ).encoded,
    ).toBeUndefined();
    // An encoder that throws leaves the op as it was.
    const plain = postOp(run);
    expect(
      encodedOp(plain, () => {
        throw new Error("boom");
      }),
    ).toBe(plain);
  });

  it("writes the same bytes from the text as from the object, large fields in parts of their own and attachments included", () => {
    const big = { text: "ü".repeat(INLINE_MAX) };
    const run = completeRun("unit", { inputs: big, events: [{ name: "new_token", time: "2026-11-22T10:15:00.500000Z" }] });
    const attachments = { "img.png": ["image/png", new Uint8Array([137, 80, 78, 71])] as [string, Uint8Array] };
    const fromObject = encodeMultipart([postOp(run, attachments), postOp(completeRun("unit"))]);
    const fromText = encodeMultipart([
      encodedOp(postOp(run, attachments), encodeRunBytes),
      encodedOp(postOp(completeRun("unit")), encodeRunBytes),
    ]);
    // Different runs in the second op: compare the first op's parts, and the structure of the rest.
    const a = normalized(fromObject).split("--BOUNDARY");
    const b = normalized(fromText).split("--BOUNDARY");
    expect(b.length).toBe(a.length);
    expect(b.slice(0, 5)).toEqual(a.slice(0, 5));
    expect(a.map((p) => /name="([^"]+)"/.exec(p)?.[1]?.replace(/[0-9a-f-]{36}/g, "ID"))).toEqual(
      b.map((p) => /name="([^"]+)"/.exec(p)?.[1]?.replace(/[0-9a-f-]{36}/g, "ID")),
    );
  });

  it("writes the same bytes from slabs as from objects across many runs: slab boundaries, runs in slabs of their own, non-ASCII", () => {
    // Sizes from a few bytes to past a slab's eighth (a slab of its own), with 1-, 2-, 3- and 4-byte characters.
    const chars = ["a", "ü", "°", "東", "😀", "\u2028"];
    const runs = Array.from({ length: 600 }, (_, i) => {
      const n = i % 50 === 49 ? 12_000 + i : (i * 37) % 900;
      const text = Array.from({ length: n }, (_, k) => chars[(i + k) % chars.length]).join("");
      return completeRun("unit", { inputs: { text, i }, outputs: { text: text.slice(0, n >> 1) } });
    });
    const fromObject = encodeMultipart(runs.map((r) => postOp(r)));
    const held = runs.map((r) => encodedOp(postOp(r), encodeRunBytes));
    expect(held.every((op) => op.encoded !== undefined)).toBe(true);
    expect(new Set(held.map((op) => op.encoded!.slab)).size).toBeGreaterThan(5); // several slabs, some of one run
    expect(normalized(encodeMultipart(held))).toBe(normalized(fromObject));
    // And each run decodes back to itself.
    for (let i = 0; i < runs.length; i += 37) expect(held[i]!.run).toEqual(JSON.parse(JSON.stringify(runs[i])));
  });

  it("reuses a slab only once none of its runs is held: runs still held keep their bytes, and a released run cannot be read", () => {
    const text = "x".repeat(1500);
    const runs = Array.from({ length: 2000 }, (_, i) => completeRun("unit", { inputs: { text, i } }));
    const first = runs.slice(0, 1000).map((r) => encodedOp(postOp(r), encodeRunBytes));
    const slabsOfFirst = new Set(first.map((op) => op.encoded!.slab));
    expect(slabsOfFirst.size).toBeGreaterThan(3);
    // Release all runs but the last of each full slab, and every run of the slab being filled: no slab is free.
    const lastOfSlab = new Map(first.map((op) => [op.encoded!.slab, op]));
    const current = first[first.length - 1]!.encoded!.slab;
    const kept = first.filter((op) => lastOfSlab.get(op.encoded!.slab) === op || op.encoded!.slab === current);
    for (const op of first) if (!kept.includes(op)) released(op);
    const second = runs.slice(1000, 1500).map((r) => encodedOp(postOp(r), encodeRunBytes));
    for (const op of second) expect(slabsOfFirst.has(op.encoded!.slab) && op.encoded!.slab !== current).toBe(false);
    // What is still held reads back intact, and went out as written.
    for (const op of kept) expect(op.run).toEqual(JSON.parse(JSON.stringify(runs[first.indexOf(op)])));
    // Now the full slabs of the first thousand are free (their last runs were read, which lets go of the bytes):
    // new runs reuse them, and the runs written there read back as themselves.
    const third = runs.slice(1500).map((r) => encodedOp(postOp(r), encodeRunBytes));
    expect(third.some((op) => slabsOfFirst.has(op.encoded!.slab))).toBe(true);
    expect(normalized(encodeMultipart(third))).toBe(normalized(encodeMultipart(runs.slice(1500).map((r) => postOp(r)))));
    for (const op of [...second, ...third]) released(op);
    // A run released without being read is gone: reading it is a bug and says so, rather than returning another run's bytes.
    const gone = first.find((op) => !kept.includes(op))!;
    expect(() => gone.run).toThrow(/read after its delivery/);
    // Releasing twice, or an op that was never encoded, is harmless.
    released(gone);
    released(postOp(runs[0]!));
  });

  it("merges an update into a waiting encoded create, the update's fields winning", () => {
    const run = completeRun("unit");
    const op = encodedOp(postOp(run), encodeRunBytes);
    mergeOps(op, patchOp(run.id, { outputs: { v: 2 }, end_time: "2026-11-22T10:17:00.000000Z" }));
    expect(op.kind).toBe("post");
    expect(op.run).toMatchObject({
      id: run.id,
      name: "work",
      outputs: { v: 2 },
      end_time: "2026-11-22T10:17:00.000000Z",
      inputs: run.inputs,
    });
  });
});

describe("Client with complete runs", () => {
  it("delivers every complete run exactly once with every field, and a later update of a waiting one wins", async () => {
    const col = await collector();
    const c = client(col.url, { batchSize: 50 });
    const runs = Array.from({ length: 300 }, () => completeRun("complete"));
    for (const r of runs) c.createRun(r);
    // Still queued (the batch of 50 only goes out in a microtask): the update merges into the encoded create.
    c.updateRun(runs[299]!.id, { outputs: { v: "newest" }, end_time: "2026-11-22T10:18:00.000000Z" });
    await c.flush();
    expect(await col.collector.store.countRuns("complete")).toBe(300);
    expect(c.stats.delivered).toBe(300);
    const first = (await col.collector.store.getRun(runs[0]!.id))!;
    expect(first).toMatchObject({ name: "work", inputs: runs[0]!.inputs, outputs: runs[0]!.outputs, extra: { metadata: { k: "v" } } });
    expect(first.end_time).toMatch(/^2026-11-22T10:15:01/);
    const last = (await col.collector.store.getRun(runs[299]!.id))!;
    expect(last).toMatchObject({ outputs: { v: "newest" }, inputs: runs[299]!.inputs });
    expect(last.end_time).toMatch(/^2026-11-22T10:18:00/);
  });

  it("spools encoded runs while the endpoint is down, and a later client delivers them whole", async () => {
    const dir = tempDir("tp-encoded-spool-");
    const spoolDir = join(dir, "spool");
    const c1 = new Client({
      endpoint: "http://127.0.0.1:9",
      apiKey: "k",
      spoolDir,
      deadLetterPath: join(dir, "dl.jsonl"),
      maxAttempts: 2,
      backoff: { baseMs: 5, maxMs: 10 },
      warn: () => {},
    });
    const runs = Array.from({ length: 40 }, () => completeRun("encoded-later"));
    for (const r of runs) c1.createRun(r);
    await c1.flush();
    expect(await c1.shutdown()).toMatchObject({ ok: false, spooled: 40 });
    await new Promise((r) => setTimeout(r, 30)); // the spool's segments come due
    const col = await collector();
    const c2 = new Client({ endpoint: col.url, apiKey: "k", spoolDir, warn: () => {} });
    cleanup.push(async () => void (await c2.shutdown()));
    await c2.flush();
    expect(await col.collector.store.countRuns("encoded-later")).toBe(40);
    for (const r of runs) expect(await col.collector.store.getRun(r.id)).toMatchObject({ inputs: r.inputs, outputs: r.outputs });
  });

  it("writes a refused encoded run to the dead-letter file as the run itself", async () => {
    const col = await collector();
    const c = client(col.url, { batchSize: 10 });
    const bad = completeRun("encoded-dl", { start_time: "not a time" });
    c.createRun(bad);
    for (let i = 0; i < 5; i++) c.createRun(completeRun("encoded-dl"));
    await c.flush();
    expect(await col.collector.store.countRuns("encoded-dl")).toBe(5);
    const lines = readFileSync(c.options.deadLetterPath, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { runs: { id: string; run: Record<string, unknown> }[] });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.runs).toEqual([{ kind: "post", id: bad.id, run: JSON.parse(JSON.stringify(bad)) }]);
  });

  it("hands a sink that does not encode multipart the run objects", async () => {
    const seen: Op[] = [];
    const sink: Sink = {
      target: "memory",
      send: async (ops) => void seen.push(...ops),
      limits: async () => ({ batchSize: 100, batchBytes: 1 << 20 }),
      close: async () => {},
    };
    const dir = tempDir("tp-encoded-sink-");
    const c = new Client({ sink, spoolDir: join(dir, "spool"), deadLetterPath: join(dir, "dl.jsonl"), warn: () => {} });
    cleanup.push(async () => void (await c.shutdown()));
    const run = completeRun("sink");
    c.createRun(run);
    await c.flush();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.encoded).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(seen[0], "run")?.value).toMatchObject({ id: run.id, end_time: run.end_time });
  });
});

describe("batch size from GET /info", () => {
  async function requestsFor(runs: number, sizeLimit: number | undefined, batchSize?: number): Promise<number[]> {
    const server = await captureServer(sizeLimit);
    const c = client(server.url, batchSize === undefined ? {} : { batchSize });
    for (let i = 0; i < runs; i++) c.createRun(completeRun("sizes"));
    await c.flush();
    // Up to four batches are in flight at once: they may arrive in any order.
    return server.bodies.map((b) => normalized(b).match(/name="post\.[0-9a-f-]{36}"/g)?.length ?? 0).sort((a, b) => b - a);
  }

  it("uses the size the server advertises when none is set", async () => {
    expect(await requestsFor(500, 250)).toEqual([250, 250]);
  });

  it("caps an advertised size at 1000", async () => {
    expect(await requestsFor(2500, 5000)).toEqual([1000, 1000, 500]);
  });

  it("sends 100 runs per request when the server advertises no size", async () => {
    expect(await requestsFor(250, undefined)).toEqual([100, 100, 50]);
  });

  it("only lowers a size the caller set", async () => {
    expect(await requestsFor(200, 250, 80)).toEqual([80, 80, 40]);
    expect(await requestsFor(200, 30, 80)).toEqual([30, 30, 30, 30, 30, 30, 20]);
  });

  it("keeps a batch of large runs to about 4 MiB, whatever the run count allows", async () => {
    const server = await captureServer(1000);
    const c = client(server.url);
    for (let i = 0; i < 200; i++) c.createRun(completeRun("large", { inputs: { text: "z".repeat(50_000) } }));
    await c.flush();
    // Each run's own part (its inputs ride in a part of their own, post.<id>.inputs).
    const runs = server.bodies.map((b) => normalized(b).match(/name="post\.[0-9a-f-]{36}"/g)?.length ?? 0);
    expect(runs.reduce((a, b) => a + b, 0)).toBe(200);
    expect(server.bodies.length).toBeGreaterThanOrEqual(3);
    for (const b of server.bodies) expect(b.body.length).toBeLessThan(4.5 * 1024 * 1024);
  });

  it("against the collector, takes its advertised 1000 and never gets a 413", async () => {
    const col = await collector();
    const proxy = await startProxy(col.url);
    cleanup.push(() => proxy.close());
    const c = client(proxy.url);
    for (let i = 0; i < 2000; i++) c.createRun(completeRun("collector-size"));
    await c.flush();
    expect(proxy.statuses).toEqual([202, 202]);
    expect(await col.collector.store.countRuns("collector-size")).toBe(2000);
  });
});
