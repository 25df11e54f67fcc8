import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import { connect } from "node:net";
import { multipart, runRecord, startCollector, testId, type Running, sql } from "../helpers/collector.js";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { openStore } from "../../src/store/index.js";

let c: Running;
beforeAll(async () => {
  c = await startCollector();
});
afterAll(async () => {
  await c.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(c.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const j = async (r: Response): Promise<any> => r.json();
const getRun = async (id: string) => (await fetch(`${c.url}/runs/${id}`)).json() as Promise<Record<string, any>>;

describe("ingest round trip", () => {
  it("returns from GET /runs/:id what the client sent in a multipart post", async () => {
    const run = runRecord({
      outputs: { answer: 42 },
      events: [{ name: "start", time: "2026-11-22T10:15:00.200000Z" }],
      extra: { metadata: { a: 1 } },
      tags: ["x"],
      end_time: "2026-11-22T10:15:01.000001Z",
    });
    const res = await fetch(c.url + "/runs/multipart", { method: "POST", body: multipart({ post: [run] }) });
    expect(res.status).toBe(202);
    const got = await getRun(run.id as string);
    for (const [k, v] of Object.entries(run)) expect(got[k]).toEqual(v);
  });

  it("merges post and patch into one run in either order, in one batch or two", async () => {
    const cases = [
      async (p: any, q: any) => fetch(c.url + "/runs/multipart", { method: "POST", body: multipart({ post: [p], patch: [q] }) }),
      async (p: any, q: any) => (
        await fetch(c.url + "/runs/multipart", { method: "POST", body: multipart({ post: [p] }) }),
        fetch(c.url + "/runs/multipart", { method: "POST", body: multipart({ patch: [q] }) })
      ),
      async (p: any, q: any) => (
        await fetch(c.url + "/runs/multipart", { method: "POST", body: multipart({ patch: [q] }) }),
        fetch(c.url + "/runs/multipart", { method: "POST", body: multipart({ post: [p] }) })
      ),
      async (p: any, q: any) => (await post("/runs/batch", { patch: [q] }), post("/runs/batch", { post: [p] })),
    ];
    for (const send of cases) {
      const p = runRecord();
      const q = {
        id: p.id,
        trace_id: p.trace_id,
        dotted_order: p.dotted_order,
        end_time: "2026-11-22T10:16:00.000000Z",
        outputs: { done: true },
      };
      expect((await send(p, q)).status).toBe(202);
      const got = await getRun(p.id as string);
      expect(got).toMatchObject({
        name: "test-run",
        inputs: { question: "why?" },
        outputs: { done: true },
        end_time: "2026-11-22T10:16:00.000000Z",
      });
    }
    expect(await c.collector.store.countRuns()).toBeGreaterThanOrEqual(4);
  });

  it("does not store a duplicate post twice, nor let it undo a patch", async () => {
    const p = runRecord();
    const before = await c.collector.store.countRuns();
    await post("/runs", p);
    await fetch(`${c.url}/runs/${p.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ end_time: "2026-11-22T10:20:00Z", outputs: { v: 2 } }),
    });
    await post("/runs", { ...p, outputs: { v: 1 } });
    expect(await c.collector.store.countRuns()).toBe(before + 1);
    expect((await getRun(p.id as string)).outputs).toEqual({ v: 2 });
  });

  it("accepts a gzip-compressed multipart body", async () => {
    const run = runRecord();
    const req = new Request("http://x", { method: "POST", body: multipart({ post: [run] }) });
    const raw = Buffer.from(await req.arrayBuffer());
    const res = await fetch(c.url + "/runs/multipart", {
      method: "POST",
      headers: { "content-type": req.headers.get("content-type")!, "content-encoding": "gzip" },
      body: gzipSync(raw),
    });
    expect(res.status).toBe(202);
    expect((await getRun(run.id as string)).name).toBe("test-run");
  });

  it("answers a zstd body with 415 naming the SDK setting that turns it off", async () => {
    const res = await fetch(c.url + "/runs/multipart", {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=x", "content-encoding": "zstd" },
      body: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]),
    });
    expect(res.status).toBe(415);
    expect(JSON.stringify(await res.json())).toContain("LANGSMITH_DISABLE_RUN_COMPRESSION=true");
  });

  it("keeps microseconds and stores attachments", async () => {
    const run = runRecord({ start_time: "2026-11-22T10:15:00.000007Z" });
    const fd = multipart({ post: [run] });
    fd.append(`attachment.${run.id}.picture`, new Blob([Buffer.from([1, 2, 3])], { type: "image/png" }), "picture.png");
    expect((await fetch(c.url + "/runs/multipart", { method: "POST", body: fd })).status).toBe(202);
    const got = await getRun(run.id as string);
    expect(got.start_time).toBe("2026-11-22T10:15:00.000007Z");
    expect(got.attachments).toEqual([
      { name: "picture", content_type: "image/png", size: 3, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
  });

  it("keeps an attachment's bytes when its part has no filename, as the Python langsmith SDK sends them", async () => {
    // requests/urllib3 write a (None, data, content_type, headers) tuple as a part with a name, a
    // Content-Type and a Content-Length, and no filename; the JSON parts likewise.
    const run = runRecord();
    const id = run.id as string;
    const bytes = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      Buffer.from("é\u00ff\r\n--not-a-boundary\r\n", "latin1"),
    ]);
    const text = Buffer.from("plain text: naïve café ☕", "utf8");
    const json = Buffer.from(JSON.stringify({ ...run, inputs: { question: "¿qué tal? 😀" } }), "utf8");
    const boundary = "8d6e1c0a5b2f4c3e9a7d";
    const part = (name: string, type: string, data: Buffer) =>
      Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: ${type}\r\nContent-Length: ${data.length}\r\n\r\n`,
        ),
        data,
        Buffer.from("\r\n"),
      ]);
    const body = Buffer.concat([
      part(`post.${id}`, "application/json", json),
      part(`attachment.${id}.image`, "image/png", bytes),
      part(`attachment.${id}.note`, "text/plain; charset=utf-8", text),
      Buffer.from(`--${boundary}--\r\n`),
    ]);
    const res = await fetch(c.url + "/runs/multipart", {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(res.status).toBe(202);
    const got = await getRun(id);
    expect((got.inputs as { question: string }).question).toBe("¿qué tal? 😀");
    const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
    expect(got.attachments).toEqual([
      { name: "image", content_type: "image/png", size: bytes.length, sha256: sha(bytes) },
      { name: "note", content_type: "text/plain", size: text.length, sha256: sha(text) },
    ]);

    // JSON parts that declare their charset are read by it, as before: a lone é (U+00E9, the byte E9 as
    // latin1, which is not UTF-8) and characters past latin1 stay what they are.
    for (const question of ["café au lait", "naïve ☕ 😀", "plain"]) {
      const r = runRecord();
      const rid = r.id as string;
      const declared = Buffer.concat([
        part(`post.${rid}`, "application/json; charset=utf-8", Buffer.from(JSON.stringify({ ...r, inputs: { question } }), "utf8")),
        Buffer.from(`--${boundary}--\r\n`),
      ]);
      expect(
        (
          await fetch(c.url + "/runs/multipart", {
            method: "POST",
            headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
            body: declared,
          })
        ).status,
      ).toBe(202);
      expect(((await getRun(rid)).inputs as { question: string }).question).toBe(question);
    }
  });

  it("reads JSON parts sent as files exactly when the body's pieces split their characters, small parts and parts past 1 MiB alike", async () => {
    const small = runRecord({ inputs: { question: "naïve café ☕ 😀 ".repeat(20) } });
    const large = runRecord({ inputs: { question: "¿qué tal? ☕ 😀 ".repeat(80_000) } });
    const encoded = new Response(multipart({ post: [small, large] }));
    const type = encoded.headers.get("content-type")!;
    const body = Buffer.from(await encoded.arrayBuffer());
    // The body goes out in pieces of 1003 bytes (then larger ones), each a chunk of its own with a pause between,
    // which cut the multibyte characters of both parts.
    let at = 0;
    const pieces = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (at >= body.length) return controller.close();
        const n = at < 200_000 ? 1003 : 64 * 1024 + 1;
        controller.enqueue(body.subarray(at, (at += n)));
        if (at < 200_000) await new Promise((r) => setImmediate(r));
      },
    });
    const res = await fetch(c.url + "/runs/multipart", {
      method: "POST",
      headers: { "content-type": type },
      body: pieces,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(202);
    expect((await getRun(small.id as string)).inputs).toEqual(small.inputs);
    expect((await getRun(large.id as string)).inputs).toEqual(large.inputs);
  });

  it("takes start_time/end_time as epoch milliseconds, as the langsmith SDKs send them", async () => {
    const start = Date.UTC(2026, 10, 22, 10, 15, 0, 250);
    const run = runRecord({ start_time: start, events: [{ name: "new_token", time: start + 5.5 }] });
    expect(
      (
        await fetch(c.url + "/runs/multipart", {
          method: "POST",
          body: multipart({
            post: [run],
            patch: [{ id: run.id, trace_id: run.trace_id, dotted_order: run.dotted_order, end_time: start + 1000 }],
          }),
        })
      ).status,
    ).toBe(202);
    const got = await getRun(run.id as string);
    expect(got.start_time).toBe("2026-11-22T10:15:00.250000Z");
    expect(got.end_time).toBe("2026-11-22T10:15:01.250000Z");
    expect(got.events[0].time).toBe("2026-11-22T10:15:00.255500Z");
    const bad = await fetch(c.url + "/runs/multipart", { method: "POST", body: multipart({ post: [runRecord({ start_time: -1 })] }) });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { loc: string[] }[] }).detail[0]!.loc).toContain("start_time");
  });
});

describe("normalization on ingest", () => {
  it("stores native messages beside a vendor payload and records the format", async () => {
    const run = runRecord({
      run_type: "llm",
      inputs: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
      outputs: {
        object: "chat.completion",
        model: "gpt-4o-2024-08-06",
        choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      },
      events: [{ name: "new_token", time: "2026-11-22T10:15:00.500000Z" }],
    });
    await post("/runs", run);
    const got = await getRun(run.id as string);
    expect(got.detected_format).toBe("openai-chat");
    expect(got.normalized_inputs).toEqual({ messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
    // Priced on the way in (gpt-4o: $2.50 in, $10 out per million), like tracepipe's own runs.
    expect(got.normalized_outputs.messages[0].usage_metadata).toEqual({
      input_tokens: 3,
      output_tokens: 1,
      total_tokens: 4,
      input_cost: 0.0000075,
      output_cost: 0.00001,
      total_cost: 0.0000175,
    });
    expect(got.inputs).toEqual(run.inputs);
    expect(got.first_token_time).toBe("2026-11-22T10:15:00.500000Z");
  });

  it("stores a run it cannot normalize, flagged with the reason", async () => {
    const run = runRecord({ run_type: "llm", inputs: { prompt: "plain text completion" } });
    expect((await post("/runs", run)).status).toBe(202);
    const got = await getRun(run.id as string);
    expect(got.detected_format).toBeNull();
    expect(got.normalize_error).toMatch(/could not detect the format/);
  });
});

describe("bad input", () => {
  it("answers malformed JSON with 400 and a detail", async () => {
    const res = await post("/runs/batch", "{nope");
    expect(res.status).toBe(400);
    expect((await j(res)).detail).toMatch(/malformed JSON/);
  });

  it("answers a multipart part with no run id with 400", async () => {
    const fd = new FormData();
    fd.append("post.", new Blob(["{}"], { type: "application/json" }));
    const res = await fetch(c.url + "/runs/multipart", { method: "POST", body: fd });
    expect(res.status).toBe(400);
    expect((await j(res)).detail).toMatch(/no run id/);
  });

  it("answers a malformed JSON part with 400 naming the part", async () => {
    const fd = new FormData();
    const id = testId();
    fd.append(`post.${id}`, new Blob(["{bad"], { type: "application/json" }));
    const res = await fetch(c.url + "/runs/multipart", { method: "POST", body: fd });
    expect(res.status).toBe(400);
    expect((await j(res)).detail).toContain(`post.${id}`);
  });

  it("answers a run that fails validation with 422 and locations", async () => {
    const bad = runRecord({ start_time: "yesterday" });
    delete bad.name;
    const res = await post("/runs/batch", { post: [runRecord(), bad] });
    expect(res.status).toBe(422);
    const { detail } = await j(res);
    expect(detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ["post", 1, "start_time"] }),
        expect.objectContaining({ loc: ["post", 1, "name"] }),
      ]),
    );
    for (const d of detail) expect(Object.keys(d).sort()).toEqual(["loc", "msg", "type"]);
  });

  it("writes nothing of a request that fails validation", async () => {
    const good = runRecord();
    await post("/runs/batch", { post: [good, { id: testId() }] });
    expect((await fetch(`${c.url}/runs/${good.id}`)).status).toBe(404);
  });

  it("answers an oversize body with 413", async () => {
    const small = await startCollector({ maxBodyBytes: 1024 });
    try {
      const res = await fetch(small.url + "/runs/batch", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ post: [runRecord({ inputs: { big: "x".repeat(5000) } })] }),
      });
      expect(res.status).toBe(413);
      expect((await j(res)).detail).toMatch(/exceeds the limit of 1024 bytes/);
    } finally {
      await small.close();
    }
  });

  it("leaves no partial run when a request dies mid-upload", async () => {
    const run = runRecord();
    const req = new Request("http://x", { method: "POST", body: multipart({ post: [run] }) });
    const body = Buffer.from(await req.arrayBuffer());
    const { port } = new URL(c.url);
    await new Promise<void>((resolve) => {
      const sock = connect(Number(port), "127.0.0.1", () => {
        sock.write(
          `POST /runs/multipart HTTP/1.1\r\nHost: x\r\nContent-Type: ${req.headers.get("content-type")}\r\nContent-Length: ${body.length}\r\n\r\n`,
        );
        sock.write(body.subarray(0, Math.floor(body.length * 0.7)));
        setTimeout(() => {
          sock.destroy();
          resolve();
        }, 100);
      });
    });
    await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${c.url}/runs/${run.id}`)).status).toBe(404);
  });

  it("answers an unknown path with 404 and a wrong method with 405", async () => {
    expect((await fetch(c.url + "/nowhere")).status).toBe(404);
    expect((await fetch(c.url + "/info", { method: "PUT" })).status).toBe(405);
  });
});

describe("auth and rate limits", () => {
  it("requires the API key when started with one", async () => {
    const k = await startCollector({ apiKey: "secret" });
    try {
      const missing = await fetch(k.url + "/info");
      expect(missing.status).toBe(401);
      expect((await j(missing)).detail).toMatch(/missing X-Api-Key/);
      expect((await fetch(k.url + "/info", { headers: { "x-api-key": "wrong" } })).status).toBe(401);
      expect((await fetch(k.url + "/info", { headers: { "x-api-key": "secret" } })).status).toBe(200);
    } finally {
      await k.close();
    }
  });

  it("answers 429 with Retry-After and X-RateLimit headers past a lowered limit", async () => {
    const l = await startCollector({ rateLimits: { overrides: { "runs-multipart": { limit: 3, windowMs: 60_000 } } } });
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 5; i++) {
        last = await fetch(l.url + "/runs/multipart", {
          method: "POST",
          headers: { "x-api-key": "k" },
          body: multipart({ post: [runRecord()] }),
        });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([202, 202, 202, 429, 429]);
      expect(last!.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(last!.headers.get("x-ratelimit-limit")).toBe("3");
      expect(last!.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(Number(last!.headers.get("x-ratelimit-reset"))).toBeGreaterThan(0);
      // Another key has its own budget.
      expect(
        (
          await fetch(l.url + "/runs/multipart", {
            method: "POST",
            headers: { "x-api-key": "other" },
            body: multipart({ post: [runRecord()] }),
          })
        ).status,
      ).toBe(202);
    } finally {
      await l.close();
    }
  });

  it("enforces the EU column where it differs", async () => {
    for (const [region, allowed] of [
      ["us", 1],
      ["eu", 20],
    ] as const) {
      const l = await startCollector({ rateLimits: true, region });
      try {
        const statuses = [];
        for (let i = 0; i < 21; i++) statuses.push((await fetch(l.url + "/runs/stats", { headers: { "x-api-key": "k" } })).status);
        // /runs/stats has no endpoint here (404), but the limit is checked first: 429 past the region's count.
        expect(statuses.filter((s) => s !== 429)).toHaveLength(allowed);
      } finally {
        await l.close();
      }
    }
  });
});

describe("query and projects", () => {
  it("pages a project's runs with a cursor in start-time order", async () => {
    const project = `p-${testId()}`;
    const runs = Array.from({ length: 25 }, (_, i) =>
      runRecord({ session_name: project, start_time: `2026-11-22T11:00:${String(i).padStart(2, "0")}.000000Z` }),
    );
    await post("/runs/batch", { post: runs });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await post("/runs/query", { project, limit: 10, cursor });
      const page = (await j(res)) as { runs: { id: string }[]; cursor: string | null };
      seen.push(...page.runs.map((r) => r.id));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toEqual(runs.map((r) => r.id));
    const ranged = (await (
      await post("/runs/query", { project, start_time_gte: "2026-11-22T11:00:10Z", start_time_lt: "2026-11-22T11:00:12Z" })
    ).json()) as { runs: unknown[] };
    expect(ranged.runs).toHaveLength(2);
    const unreadable = await post("/runs/query", { project, start_time_gte: "yesterday" });
    expect(unreadable.status).toBe(422);
    expect(((await unreadable.json()) as { detail: { loc: unknown[] }[] }).detail).toEqual([
      expect.objectContaining({ loc: ["start_time_gte"], type: "custom" }),
    ]);
  });

  it("finds a multipart run's non-ASCII text that its client wrote as \\u escapes, as it finds a batch run's", async () => {
    const project = `ascii-${testId()}`;
    const run = runRecord({ session_name: project });
    const { id } = run;
    const fd = new FormData();
    fd.append(`post.${id}`, new Blob([JSON.stringify(run)], { type: "application/json" }));
    // As Python's json.dumps writes it by default (ensure_ascii).
    fd.append(`post.${id}.inputs`, new Blob(['{"q": "une \\u00e9cole \\ud83d\\ude00"}'], { type: "application/json" }));
    expect((await fetch(c.url + "/runs/multipart", { method: "POST", body: fd })).status).toBe(202);
    expect(((await j(await fetch(c.url + `/runs/${id}`))) as { inputs: unknown }).inputs).toEqual({ q: "une école 😀" });
    for (const q of ["école", "😀"]) {
      const page = (await j(await fetch(`${c.url}/api/viewer/traces?project=${project}&q=${encodeURIComponent(q)}`))) as {
        traces: { trace_id: string }[];
      };
      expect(
        page.traces.map((t) => t.trace_id),
        q,
      ).toEqual([id]);
    }
  });

  it("filters by trace id and run type", async () => {
    const root = runRecord();
    const child = runRecord({
      trace_id: root.id,
      parent_run_id: root.id,
      run_type: "llm",
      dotted_order: `${root.dotted_order}.20261122T101500200000Z${testId()}`,
    });
    await post("/runs/batch", { post: [root, child] });
    const byTrace = (await (await post("/runs/query", { trace_id: root.id })).json()) as { runs: { id: string }[] };
    expect(byTrace.runs.map((r) => r.id).sort()).toEqual([root.id, child.id].sort());
    const llm = (await (await post("/runs/query", { trace_id: root.id, run_type: "llm" })).json()) as { runs: { id: string }[] };
    expect(llm.runs.map((r) => r.id)).toEqual([child.id]);
  });

  it("deletes a project and its runs", async () => {
    const project = `del-${testId()}`;
    await post("/runs/batch", { post: [runRecord({ session_name: project }), runRecord({ session_name: project })] });
    const res = await fetch(`${c.url}/sessions?name=${project}`, { method: "DELETE" });
    expect(await j(res)).toEqual({ deleted_runs: 2, name: project });
    expect(await c.collector.store.countRuns(project)).toBe(0);
  });

  it("advertises its batch config in GET /info", async () => {
    const info = await (await fetch(c.url + "/info")).json();
    expect(info).toMatchObject({
      version: expect.any(String),
      batch_ingest_config: { size_limit: 1000, supports_gzip: true },
      instance_flags: { zstd_compression_enabled: false },
    });
  });
});

describe("store", () => {
  it("applies migrations once and keeps data across reopen", async () => {
    const run = runRecord();
    await post("/runs", run);
    const other = await openStore(c.dbPath);
    try {
      expect((await other.getRun(run.id as string))?.name).toBe("test-run");
      expect((sql(other).prepare("SELECT COUNT(*) AS n FROM schema_migrations").get() as { n: number }).n).toBe(MIGRATIONS.length);
      expect(sql(other).pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      other.close();
    }
  });
});
