/**
 * Client.createFeedback: feedback goes as runs go, through the same queue,
 * multipart batches, limits and spool, to the collector or the embedded store,
 * and the collector checks a batch's feedback parts with its runs.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { Client } from "../../src/ingest/index.js";
import { openStore } from "../../src/store/index.js";
import { cleanupAfterEach } from "../helpers/cleanup.js";
import { runRecord } from "../helpers/collector.js";
import { startProxy } from "../helpers/proxy.js";
import { makeRun, tempDir } from "../helpers/runs.js";

const { cleanup, collector } = cleanupAfterEach();

function client(endpoint: string | undefined, opts: ConstructorParameters<typeof Client>[0] = {}): Client {
  const dir = tempDir("tp-feedback-");
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

describe("Client.createFeedback", () => {
  it("sends feedback in the same multipart request as the run it is about", async () => {
    const col = await collector();
    let requests = 0;
    const proxy = await startProxy(col.url, (_n, req) => {
      if (req.url === "/runs/multipart") requests++;
      return "pass";
    });
    cleanup.push(() => proxy.close());
    const c = client(proxy.url, { project: "fb" });
    const run = makeRun("fb");
    c.createRun(run);
    const id = c.createFeedback(run.id, "thumbs", { score: 1, comment: "good" });
    expect((await c.flush()).ok).toBe(true);
    expect(requests).toBe(1);
    const [f] = await col.collector.store.feedbackOf([run.id]);
    expect([f?.id, f?.key, f?.score, f?.comment, f?.source]).toEqual([id, "thumbs", 1, "good", "api"]);
  });

  it("writes feedback to the embedded store when no endpoint is set", async () => {
    const db = join(tempDir("tp-feedback-db-"), "traces.db");
    const c = client(undefined, { dbPath: db });
    const run = makeRun("embedded");
    c.createRun(run);
    c.createFeedback(run.id, "rating", { value: "5 stars" });
    expect((await c.shutdown()).ok).toBe(true);
    const store = await openStore(db);
    try {
      expect((await store.feedbackOf([run.id])).map((f) => [f.key, f.value])).toEqual([["rating", "5 stars"]]);
    } finally {
      await store.close();
    }
  });

  it("spools feedback while the collector is down and the next Client delivers it once", async () => {
    const col = await collector();
    let down = true;
    const proxy = await startProxy(col.url, () => (down ? { status: 503 } : "pass"));
    cleanup.push(() => proxy.close());
    const spoolDir = join(tempDir("tp-feedback-spool-"), "spool");
    const a = client(proxy.url, { spoolDir, backoff: { baseMs: 200, maxMs: 5000 } });
    const runId = randomUUID();
    const id = a.createFeedback(runId, "late", { score: 0.25 });
    const s = await a.shutdown({ timeoutMs: 100 });
    expect(s).toMatchObject({ ok: false, spooled: 1 });
    down = false;
    const b = client(proxy.url, { spoolDir });
    expect(await b.flush()).toMatchObject({ ok: true, spooled: 0 });
    const stored = await col.collector.store.feedbackOf([runId]);
    expect(stored.map((f) => [f.id, f.score])).toEqual([[id, 0.25]]);
  });
});

describe("feedback parts at the collector", () => {
  it("refuses a batch whose feedback part is invalid, naming the part and field, and stores none of it", async () => {
    const col = await collector();
    const run = runRecord({ session_name: "fb-bad" });
    const fid = randomUUID();
    const fd = new FormData();
    fd.append(`post.${run.id}`, new Blob([JSON.stringify(run)], { type: "application/json" }));
    fd.append(`feedback.${fid}`, new Blob([JSON.stringify({ id: fid, run_id: run.id, score: "high" })], { type: "application/json" }));
    const res = await fetch(`${col.url}/runs/multipart`, { method: "POST", body: fd });
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { loc: (string | number)[] }[] };
    expect(detail.map((d) => d.loc.join("."))).toEqual([`feedback.${fid}.key`, `feedback.${fid}.score`]);
    expect(await col.collector.store.getRun(run.id as string)).toBeUndefined();
  });
});
