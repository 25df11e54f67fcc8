/**
 * The collector under hostile input (issue 13, items 9-14), over loopback with
 * the real collector; every test counts what was (not) stored.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connect, type Socket } from "node:net";
import Database from "better-sqlite3";
import pg from "pg";
import { isStoreUrl } from "../../src/env.js";
import { gzipSync } from "node:zlib";
import { multipart, runRecord, startCollector, testId, type Running } from "../helpers/collector.js";
import { batchCheck } from "../../src/server/validation.js";
import { Slicer } from "../../src/internal/slicer.js";
import { TraceRequest, TraceResponse } from "../../src/otlp/protobuf.js";
import { IssueList } from "../../src/server/issues.js";
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS } from "../../src/server/limits.js";

let c: Running;
beforeAll(async () => {
  c = await startCollector();
});
afterAll(async () => {
  await c.close();
});
const extra: Running[] = [];
afterEach(async () => {
  while (extra.length) await extra.pop()!.close();
});
async function collector(opts: Parameters<typeof startCollector>[0]): Promise<Running> {
  const r = await startCollector(opts);
  extra.push(r);
  return r;
}

const postJson = (base: string, path: string, body: string | unknown) =>
  fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const detailOf = async (r: Response) =>
  (await r.json()) as {
    detail: { loc: (string | number)[]; msg: string; type: string }[];
    issue_count?: number;
    issue_count_complete?: boolean;
  };
const stored = (r: Running, project: string) => r.collector.store.countRuns(project);
/** A row count read from the collector's database directly (its SQLite file, or PostgreSQL in the postgres test project). */
async function rows(r: Running, table: "attachments" | "otel_spans"): Promise<number> {
  const target = r.collector.store.target;
  if (isStoreUrl(target)) {
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      return Number((await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table}`)).rows[0]!.n);
    } finally {
      await client.end();
    }
  }
  const db = new Database(r.dbPath, { readonly: true });
  try {
    return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}
const attachmentRows = (r: Running) => rows(r, "attachments");

/** `{"a":{"a":...1...}}` nested `n` deep, as text (JSON.stringify itself cannot build it). */
const deepObject = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);
/** A run's JSON with `inputs` replaced by raw JSON text. */
const runWithRawInputs = (run: Record<string, unknown>, raw: string) =>
  JSON.stringify({ ...run, inputs: "__RAW__" }).replace('"__RAW__"', raw);

describe("deep nesting (item 9)", () => {
  it("answers JSON nested 10,000 deep with 422 and a loc on /runs, /runs/batch and /runs/multipart, storing nothing", async () => {
    const project = `deep-${testId()}`;
    const run = runRecord({ session_name: project });

    const single = await postJson(c.url, "/runs", runWithRawInputs(run, deepObject(10_000)));
    expect(single.status).toBe(422);
    const d1 = await detailOf(single);
    expect(d1.detail).toHaveLength(1);
    expect(d1.detail[0]).toMatchObject({ type: "json_depth", loc: ["inputs", "a", "a", "a", "a", "a", "a", "a"] });

    const good = runRecord({ session_name: project });
    const batch = await postJson(
      c.url,
      "/runs/batch",
      `{"post":[${JSON.stringify(good)},${runWithRawInputs(runRecord({ session_name: project }), deepObject(10_000))}]}`,
    );
    expect(batch.status).toBe(422);
    expect((await detailOf(batch)).detail[0]!.loc.slice(0, 3)).toEqual(["post", 1, "inputs"]);

    const id = testId();
    const fd = multipart({ post: [runRecord({ id, session_name: project, inputs: undefined })] });
    fd.append(`post.${id}.inputs`, new Blob([deepObject(10_000)], { type: "application/json" }));
    fd.append(`post.${id}.events`, new Blob(["[".repeat(100_000) + "]".repeat(100_000)], { type: "application/json" }));
    const mp = await fetch(c.url + "/runs/multipart", { method: "POST", body: fd });
    expect(mp.status).toBe(422);
    const d3 = await detailOf(mp);
    expect(d3.detail.map((d) => d.loc[0])).toEqual([`post.${id}.inputs`, `post.${id}.events`]);
    expect(d3.detail.every((d) => d.type === "json_depth")).toBe(true);

    expect(await stored(c, project)).toBe(0);
    // And the collector is still up and answering.
    expect((await fetch(c.url + "/info")).status).toBe(200);
  });

  it("stores a run nested just inside the advertised limit", async () => {
    const info = (await (await fetch(c.url + "/info")).json()) as { batch_ingest_config: { max_json_depth: number } };
    expect(info.batch_ingest_config.max_json_depth).toBe(DEFAULT_LIMITS.maxJsonDepth);
    const project = `deep-ok-${testId()}`;
    const run = runRecord({ session_name: project });
    // The run object is level 1 and `inputs` level 2: the innermost object sits exactly at the limit.
    const res = await postJson(c.url, "/runs", runWithRawInputs(run, deepObject(DEFAULT_LIMITS.maxJsonDepth - 1)));
    expect(res.status).toBe(202);
    expect(await stored(c, project)).toBe(1);
    const over = await postJson(
      c.url,
      "/runs",
      runWithRawInputs(runRecord({ session_name: project }), deepObject(DEFAULT_LIMITS.maxJsonDepth)),
    );
    expect(over.status).toBe(422);
    expect(await stored(c, project)).toBe(1);
  });
});

describe("timestamps (item 10)", () => {
  it("refuses what is not an RFC 3339 date-time or epoch milliseconds, naming the field, and stores only the valid runs", async () => {
    const project = `time-${testId()}`;
    const bad: [Record<string, unknown>, (string | number)[], RegExp][] = [
      [{ start_time: "hello 5" }, ["start_time"], /RFC 3339/],
      [{ start_time: "2025-02-30T10:00:00Z" }, ["start_time"], /not a calendar date \(February 2025 has 28 days\)/],
      [{ start_time: "2025-02-30" }, ["start_time"], /RFC 3339/],
      [{ end_time: "2026-11-22T25:00:00Z" }, ["end_time"], /not a time of day/],
      [{ end_time: "1732270500123" }, ["end_time"], /RFC 3339/], // epoch ms as a string is not epoch ms
      [{ events: [{ name: "new_token", time: "yesterday" }] }, ["events", 0, "time"], /RFC 3339/],
      [{ start_time: true }, ["start_time"], /date-time string or epoch milliseconds/],
    ];
    for (const [fields, loc, msg] of bad) {
      const res = await postJson(c.url, "/runs", runRecord({ session_name: project, ...fields }));
      expect(res.status, JSON.stringify(fields)).toBe(422);
      const { detail } = await detailOf(res);
      expect(detail).toEqual([expect.objectContaining({ loc, msg: expect.stringMatching(msg) })]);
    }
    const batch = await postJson(c.url, "/runs/batch", {
      post: [runRecord({ session_name: project }), runRecord({ session_name: project, start_time: "2024-02-30T00:00:00Z" })],
    });
    expect(batch.status).toBe(422);
    expect((await detailOf(batch)).detail.map((d) => d.loc)).toEqual([["post", 1, "start_time"]]);
    const mp = await fetch(c.url + "/runs/multipart", {
      method: "POST",
      body: multipart({ post: [runRecord({ session_name: project, start_time: "hello 5" })] }),
    });
    expect(mp.status).toBe(422);
    expect(await stored(c, project)).toBe(0);

    const good = [
      runRecord({ session_name: project, start_time: "2024-02-29T23:59:59.999999Z" }),
      runRecord({ session_name: project, start_time: "2026-11-22T10:15:00+0200" }),
      runRecord({ session_name: project, start_time: "2026-11-22 10:15:00.5-01:30" }),
      runRecord({ session_name: project, start_time: Date.UTC(2026, 10, 22, 10, 15) }),
    ];
    expect((await postJson(c.url, "/runs/batch", { post: good })).status).toBe(202);
    expect(await stored(c, project)).toBe(4);
    const times = await Promise.all(good.map(async (r) => (await c.collector.store.getRun(r.id as string))!.start_time));
    expect(times).toEqual([
      "2024-02-29T23:59:59.999999Z",
      "2026-11-22T08:15:00.000000Z",
      "2026-11-22T11:45:00.500000Z",
      "2026-11-22T10:15:00.000000Z",
    ]);
  });
});

describe("attachments and OTLP envelopes (item 11)", () => {
  it("answers an attachment for a run id that is not a UUID with 422 and writes no row", async () => {
    const project = `att-${testId()}`;
    const before = await attachmentRows(c);
    const run = runRecord({ session_name: project });
    const fd = multipart({ post: [run] });
    fd.append("attachment.not-a-uuid.picture", new Blob([Buffer.from([1, 2, 3])], { type: "image/png" }), "picture.png");
    const res = await fetch(c.url + "/runs/multipart", { method: "POST", body: fd });
    expect(res.status).toBe(422);
    expect((await detailOf(res)).detail).toEqual([
      { loc: ["attachment.not-a-uuid.picture"], msg: 'run id "not-a-uuid" is not a UUID', type: "uuid_parsing" },
    ]);
    expect(await stored(c, project)).toBe(0);
    expect(await attachmentRows(c)).toBe(before);
  });

  it("refuses OTLP JSON spans whose times name no time, naming the field: alone a 400, beside good spans a partial success that stores the good ones", async () => {
    const spans = () => rows(c, "otel_spans");
    const before = await spans();
    const traceId = "8b8efff798038103d269b633813fc60c";
    const good = { traceId, spanId: "cee19b7ec3c1b174", name: "good", startTimeUnixNano: "1700000000000000000", endTimeUnixNano: 1 };
    const at = "resourceSpans.0.scopeSpans.0.spans.1";
    for (const [o, field] of [
      [{ startTimeUnixNano: "abc" }, `${at}.startTimeUnixNano`],
      [{ endTimeUnixNano: 1.5 }, `${at}.endTimeUnixNano`],
      [{ startTimeUnixNano: "99999999999999999999999" }, `${at}.startTimeUnixNano`],
      [{ startTimeUnixNano: -5 }, `${at}.startTimeUnixNano`],
      [{ events: [{ name: "e", timeUnixNano: {} }] }, `${at}.events.0.timeUnixNano`],
    ] as const) {
      const bad = { traceId, spanId: "dee19b7ec3c1b174", name: "bad", ...o };
      const had = await spans();
      const alone = await postJson(c.url, "/v1/traces", { resourceSpans: [{ scopeSpans: [{ spans: [bad] }] }] });
      expect(alone.status, JSON.stringify(o)).toBe(400);
      expect(((await alone.json()) as { detail: string }).detail).toContain(`${field.replace(".spans.1.", ".spans.0.")}: not a time`);
      expect(await spans()).toBe(had);
      const res = await postJson(c.url, "/v1/traces", { resourceSpans: [{ scopeSpans: [{ spans: [good, bad] }] }] });
      expect(res.status, JSON.stringify(o)).toBe(200);
      const { partialSuccess } = (await res.json()) as { partialSuccess: { rejectedSpans: number; errorMessage: string } };
      expect(partialSuccess.rejectedSpans).toBe(1);
      expect(partialSuccess.errorMessage).toContain(`${field}: not a time in nanoseconds since the epoch`);
    }
    // The good span is stored (once: every request above sent it with the same id), the bad one never.
    expect(await spans()).toBe(before + 1);
    const log = { traceId, spanId: "cee19b7ec3c1b174", timeUnixNano: "1e9", body: { stringValue: "x" } };
    const res = await postJson(c.url, "/v1/logs", { resourceLogs: [{ scopeLogs: [{ logRecords: [log] }] }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/^resourceLogs\.0\.scopeLogs\.0\.logRecords\.0\.timeUnixNano: /);
    // The same request with times that name a time is stored, with nothing refused.
    const fine = await postJson(c.url, "/v1/traces", { resourceSpans: [{ scopeSpans: [{ spans: [good] }] }] });
    expect(fine.status).toBe(200);
    expect(await fine.json()).toEqual({ partialSuccess: {} });
    expect(await spans()).toBe(before + 1);
  });

  it("refuses OTLP JSON spans with attribute values of the wrong shape, naming the value: alone a 400, beside good spans a partial success", async () => {
    const spans = () => rows(c, "otel_spans");
    const before = await spans();
    const traceId = "9b8efff798038103d269b633813fc60c";
    const good = { traceId, spanId: "cee19b7ec3c1b174", name: "good", startTimeUnixNano: "1", endTimeUnixNano: "2" };
    const at = "resourceSpans.0.scopeSpans.0.spans.1";
    const attr = (value: unknown) => ({
      attributes: [
        { key: "ok", value: { stringValue: "x" } },
        { key: "k", value },
      ],
    });
    for (const [o, detail] of [
      [attr({ bytesValue: 5 }), `${at}.attributes.1.value.bytesValue: expected base64 text`],
      [attr({ arrayValue: { values: "x" } }), `${at}.attributes.1.value.arrayValue.values: expected a list`],
      [attr({ arrayValue: { values: [{ stringValue: "a" }, 7] } }), `${at}.attributes.1.value.arrayValue.values.1: expected an AnyValue`],
      [attr({ kvlistValue: { values: 5 } }), `${at}.attributes.1.value.kvlistValue.values: expected a list`],
      [attr("x"), `${at}.attributes.1.value: expected an AnyValue`],
      [{ events: [{ name: "e", timeUnixNano: "1", attributes: 5 }] }, `${at}.events.0.attributes: expected a list`],
      [{ links: [{ traceId, spanId: "cee19b7ec3c1b174", attributes: 5 }] }, `${at}.links.0.attributes: expected a list`],
    ] as const) {
      const bad = { traceId, spanId: "dee19b7ec3c1b174", name: "bad", ...o };
      const had = await spans();
      const alone = await postJson(c.url, "/v1/traces", { resourceSpans: [{ scopeSpans: [{ spans: [bad] }] }] });
      expect(alone.status, JSON.stringify(o)).toBe(400);
      expect(((await alone.json()) as { detail: string }).detail).toContain(detail.replace(".spans.1.", ".spans.0."));
      expect(await spans()).toBe(had);
      const res = await postJson(c.url, "/v1/traces", { resourceSpans: [{ scopeSpans: [{ spans: [good, bad] }] }] });
      expect(res.status, JSON.stringify(o)).toBe(200);
      const { partialSuccess } = (await res.json()) as { partialSuccess: { rejectedSpans: number; errorMessage: string } };
      expect(partialSuccess).toEqual({ rejectedSpans: 1, errorMessage: expect.stringContaining(detail) as string });
    }
    expect(await spans()).toBe(before + 1);
    const log = { traceId, spanId: "cee19b7ec3c1b174", timeUnixNano: "1", body: { bytesValue: 5 } };
    const res = await postJson(c.url, "/v1/logs", { resourceLogs: [{ scopeLogs: [{ logRecords: [log] }] }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toContain("resourceLogs.0.scopeLogs.0.logRecords.0.body.bytesValue: ");
    // Enums a proto3 JSON writer spells by name are read by name, on either store; one no one knows is 0 (unspecified).
    const named = [
      { ...good, kind: "SPAN_KIND_CLIENT" },
      { ...good, spanId: "dee19b7ec3c1b174", kind: "no such kind" },
    ];
    expect((await postJson(c.url, "/v1/traces", { resourceSpans: [{ scopeSpans: [{ spans: named }] }] })).status).toBe(200);
    expect((await c.collector.store.spansOfTrace(traceId)).map((s) => [s.span_id, s.kind])).toEqual([
      ["cee19b7ec3c1b174", 3],
      ["dee19b7ec3c1b174", 0],
    ]);
    const warn = { ...log, body: { stringValue: "x" }, severityNumber: "SEVERITY_NUMBER_WARN2" };
    expect((await postJson(c.url, "/v1/logs", { resourceLogs: [{ scopeLogs: [{ logRecords: [warn] }] }] })).status).toBe(200);
  });

  it("answers a protobuf export in protobuf, and refuses the malformed spans and log records of an export alone (OTLP partial success)", async () => {
    const traceId = "6b8efff798038103d269b633813fc60c";
    const span = (spanId: string, name: string) => ({ traceId, spanId, name, startTimeUnixNano: "1", endTimeUnixNano: "2" });
    // Protobuf: a span without a spanId beside a good one.
    const proto = TraceRequest.encode(
      TraceRequest.fromObject({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  { ...span("", "good"), traceId: Buffer.from(traceId, "hex"), spanId: Buffer.from("a1e19b7ec3c1b174", "hex") },
                  { ...span("", "no span id"), traceId: Buffer.from(traceId, "hex"), spanId: Buffer.alloc(0) },
                ],
              },
            ],
          },
        ],
      }),
    ).finish();
    const res = await fetch(`${c.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/x-protobuf" }, body: proto });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-protobuf");
    expect(TraceResponse.toObject(TraceResponse.decode(new Uint8Array(await res.arrayBuffer())), { longs: Number })).toEqual({
      partialSuccess: {
        rejectedSpans: 1,
        errorMessage: expect.stringContaining("resourceSpans.0.scopeSpans.0.spans.1.spanId: ") as string,
      },
    });
    // A resource whose own attributes are malformed refuses its spans; another resource's spans are stored.
    const json = await postJson(c.url, "/v1/traces", {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "k", value: { bytesValue: 5 } }] },
          scopeSpans: [{ spans: [span("b1e19b7ec3c1b174", "x"), span("b2e19b7ec3c1b174", "y")] }],
        },
        { scopeSpans: [{ spans: [span("b3e19b7ec3c1b174", "kept")] }] },
      ],
    });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({
      partialSuccess: {
        rejectedSpans: 2,
        errorMessage: expect.stringContaining("resourceSpans.0.resource.attributes.0.value.bytesValue: expected base64 text") as string,
      },
    });
    expect((await c.collector.store.spansOfTrace(traceId)).map((x) => x.name).sort()).toEqual(["good", "kept"]);
    // Log records: the one with a body of the wrong shape is refused, the other stored.
    const logs = await postJson(c.url, "/v1/logs", {
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                { traceId, spanId: "b3e19b7ec3c1b174", timeUnixNano: "5", body: { bytesValue: 5 } },
                { traceId, spanId: "b3e19b7ec3c1b174", timeUnixNano: "6", body: { stringValue: "kept" } },
              ],
            },
          ],
        },
      ],
    });
    expect(logs.status).toBe(200);
    expect(await logs.json()).toEqual({
      partialSuccess: { rejectedLogRecords: 1, errorMessage: expect.stringContaining("logRecords.0.body.bytesValue: ") as string },
    });
    expect((await c.collector.store.logsOfTrace(traceId)).map((l) => l.body)).toEqual([JSON.stringify("kept")]);
  });

  it("stores a span named with U+0000 beside the others of its export", async () => {
    // PostgreSQL text cannot hold U+0000, which a JSON string can carry: the export is stored, not refused whole.
    const spans = () => rows(c, "otel_spans");
    const before = await spans();
    const traceId = "7b8efff798038103d269b633813fc60c";
    const span = (spanId: string, name: string) => ({ traceId, spanId, name, startTimeUnixNano: "1", endTimeUnixNano: "2" });
    const otlp = {
      resourceSpans: [{ scopeSpans: [{ spans: [span("aee19b7ec3c1b174", "a\u0000b"), span("bee19b7ec3c1b174", "plain")] }] }],
    };
    const res = await postJson(c.url, "/otel/v1/traces", otlp);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await spans()).toBe(before + 2);
    // Kept exactly where the store can (SQLite); PostgreSQL keeps U+FFFD in its place, as it does for log records.
    const names = (await c.collector.store.spansOfTrace(traceId)).map((s) => s.name.replace("\u0000", "\ufffd"));
    expect(names.sort()).toEqual(["a\ufffdb", "plain"]);
  });

  it("answers OTLP JSON of the wrong shape with 400 and stores no span", async () => {
    const spans = () => rows(c, "otel_spans");
    const before = await spans();
    for (const body of [
      { resourceSpans: "x" },
      { resourceSpans: [{ scopeSpans: "x" }] },
      {
        resourceSpans: [
          {
            scopeSpans: [
              { spans: [{ traceId: "5b8efff798038103d269b633813fc60c", spanId: "eee19b7ec3c1b174", name: "s", attributes: "x" }] },
            ],
          },
        ],
      },
      [],
    ]) {
      const res = await postJson(c.url, "/otel/v1/traces", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/OTLP/);
    }
    expect(await spans()).toBe(before);
    // An empty request is still fine.
    expect((await postJson(c.url, "/otel/v1/traces", { resourceSpans: [] })).status).toBe(200);
  });
});

describe("bounded work and answers (items 12 and 13)", () => {
  it("lists the first 100 problems of a 422 and counts the rest, storing nothing", async () => {
    const project = `many-${testId()}`;
    const runs = Array.from({ length: 1000 }, () => runRecord({ session_name: project, start_time: "nope", run_type: "" }));
    const res = await postJson(c.url, "/runs/batch", { post: runs });
    expect(res.status).toBe(422);
    const body = await detailOf(res);
    expect(body.issue_count).toBe(2000);
    expect(body.detail).toHaveLength(101);
    expect(body.detail[100]).toEqual({ loc: [], msg: "1900 more problem(s) not listed (2000 in all)", type: "too_many_errors" });
    expect(body.detail[0]!.loc).toEqual(["post", 0, "run_type"]);
    expect(await stored(c, project)).toBe(0);
  });

  it("stops checking after 10,000 problems of a million bad tags, and yields to the event loop while checking", async () => {
    const run = runRecord({ tags: Array.from({ length: 1_000_000 }, () => 1) });
    const issues = new IssueList(100, 50_000);
    let turns = 0;
    const tick = () => {
      turns++;
      if (pending) setImmediate(tick);
    };
    let pending = true;
    setImmediate(tick);
    const ok = await batchCheck(issues, new Slicer()).post(run, []);
    pending = false;
    expect(ok).toBe(false);
    expect(issues.count).toBe(50_000);
    expect(issues.listed).toHaveLength(100);
    expect(turns).toBeGreaterThan(10); // other work got turns of the loop meanwhile
    const res = await postJson(c.url, "/runs", run);
    expect(res.status).toBe(422);
    const body = await detailOf(res);
    expect(body).toMatchObject({ issue_count: DEFAULT_LIMITS.maxCountedIssues, issue_count_complete: false });
    expect(body.detail).toHaveLength(101);
    expect(body.detail[0]!.loc).toEqual(["tags", 0]);
    expect(body.detail[100]!.msg).toBe("at least 9900 more problem(s) not listed; checking stopped after 10000");
  });

  it("enforces /info's advertised batch size and byte size with 413, so the client splits", async () => {
    const small = await collector({ batchSizeLimit: 5, batchSizeBytesLimit: 4096 });
    const info = (await (await fetch(small.url + "/info")).json()) as {
      batch_ingest_config: { size_limit: number; size_limit_bytes: number };
    };
    expect(info.batch_ingest_config).toMatchObject({ size_limit: 5, size_limit_bytes: 4096 });
    const project = "limits";
    const six = Array.from({ length: 6 }, () => runRecord({ session_name: project }));
    expect((await postJson(small.url, "/runs/batch", { post: six })).status).toBe(413);
    expect(
      (
        await postJson(small.url, "/runs/batch", {
          post: six.slice(0, 3),
          patch: six.slice(3).map((r) => ({ id: r.id, end_time: "2026-11-22T10:16:00Z" })),
        })
      ).status,
    ).toBe(413);
    const mp = await fetch(small.url + "/runs/multipart", { method: "POST", body: multipart({ post: six }) });
    expect(mp.status).toBe(413);
    expect(((await mp.json()) as { detail: string }).detail).toMatch(/more than 5 runs/);
    // Two runs over the byte size: 413; one run of the same size alone: accepted.
    const big = () => runRecord({ session_name: project, inputs: { text: "x".repeat(3000) } });
    expect((await postJson(small.url, "/runs/batch", { post: [big(), big()] })).status).toBe(413);
    expect((await fetch(small.url + "/runs/multipart", { method: "POST", body: multipart({ post: [big(), big()] }) })).status).toBe(413);
    expect(await stored(small, project)).toBe(0);
    expect((await postJson(small.url, "/runs/batch", { post: [big()] })).status).toBe(202);
    expect((await postJson(small.url, "/runs/batch", { post: six.slice(0, 5) })).status).toBe(202);
    expect(await stored(small, project)).toBe(6);
  });

  it("refuses a gzip body that inflates past the body limit with 413, storing nothing", async () => {
    const small = await collector({ maxBodyBytes: 64 * 1024 });
    const run = runRecord({ session_name: "bomb", inputs: { text: "z".repeat(2 * 1024 * 1024) } });
    const packed = gzipSync(JSON.stringify(run));
    expect(packed.length).toBeLessThan(64 * 1024);
    const res = await fetch(small.url + "/runs", {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: packed,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/decompressed body exceeds the limit of 65536 bytes/);
    expect(await stored(small, "bomb")).toBe(0);
  });

  it("refuses a multipart body with more parts than the limit with 413", async () => {
    const small = await collector({ limits: { maxMultipartParts: 20 } });
    const id = testId();
    const fd = new FormData();
    for (let i = 0; i < 50; i++) fd.append(`post.${id}.inputs`, new Blob([`{"i":${i}}`], { type: "application/json" }));
    const res = await fetch(small.url + "/runs/multipart", { method: "POST", body: fd });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/more than 20 parts/);
    expect(await small.collector.store.countRuns()).toBe(0);
  });

  it("answers 400 to a multipart body that ends inside a part sent as a file, stores nothing and keeps serving", async () => {
    const id = testId();
    const boundary = `cut-${id}`;
    const runPart = JSON.stringify(runRecord({ id, session_name: "cut-file-part" }));
    const body =
      `--${boundary}\r\nContent-Disposition: form-data; name="post.${id}"; filename="blob"\r\nContent-Type: application/json\r\n\r\n${runPart}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="post.${id}.inputs"; filename="blob"\r\nContent-Type: application/json\r\n\r\n{"text":"cut he`;
    const res = await fetch(c.url + "/runs/multipart", {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/Unexpected end of form/);
    expect((await fetch(c.url + "/info")).status).toBe(200);
    expect(await stored(c, "cut-file-part")).toBe(0);
  });

  it("answers 400 to a multipart part that names no part, sent as a file or a field, stores nothing and keeps serving", async () => {
    const id = testId();
    const boundary = `unnamed-${id}`;
    const runPart = JSON.stringify(runRecord({ id, session_name: "unnamed-part" }));
    const part = (disposition: string, body: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; ${disposition}\r\nContent-Type: application/json\r\n\r\n${body}\r\n`;
    for (const disposition of ['filename="blob"', "name*=utf-8''post.x; filename=\"blob\"", "name*=utf-8''post.x"]) {
      const res = await fetch(c.url + "/runs/multipart", {
        method: "POST",
        headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
        body: part(`name="post.${id}"`, runPart) + part(disposition, "{}") + `--${boundary}--\r\n`,
      });
      expect(res.status, disposition).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/a part without a name/);
    }
    expect((await fetch(c.url + "/info")).status).toBe(200);
    expect(await stored(c, "unnamed-part")).toBe(0);
  });

  it("reads one large body at a time when so configured, while GET /info is still answered", async () => {
    const s = await collector({ limits: { largeBodyBytes: 1024, maxConcurrentLargeBodies: 1 } });
    const project = "slots";
    const a = runRecord({ session_name: project, inputs: { text: "a".repeat(20_000) } });
    const aBody = JSON.stringify(a);
    // Request A: declared large, only half sent, so it holds the one slot.
    const sock = await rawRequest(
      s.url,
      `POST /runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(aBody)}\r\n\r\n` +
        aBody.slice(0, 10_000),
    );
    await until(() => s.collector.bodies().large === 1);
    // Request B: large too; it waits for the slot.
    const b = runRecord({ session_name: project, inputs: { text: "b".repeat(20_000) } });
    let bStatus = 0;
    const bDone = postJson(s.url, "/runs", b).then((r) => (bStatus = r.status));
    await until(() => s.collector.bodies().waiting === 1);
    expect((await fetch(s.url + "/info")).status).toBe(200);
    expect(bStatus).toBe(0);
    expect(await stored(s, project)).toBe(0);
    // A completes; B gets the slot and completes.
    const aAnswer = readStatus(sock);
    sock.write(aBody.slice(10_000));
    expect(await aAnswer).toBe(202);
    await bDone;
    expect(bStatus).toBe(202);
    expect(await stored(s, project)).toBe(2);
    await until(() => s.collector.bodies().large === 0);
    sock.destroy();
  });
});

describe("large-body byte budget (item 13)", () => {
  it("holds a large body back while the bytes already held leave no room for it, though slots are free", async () => {
    const s = await collector({ limits: { largeBodyBytes: 1024, maxConcurrentLargeBodies: 4, largeBodyBudgetBytes: 30_000 } });
    const project = "budget";
    const a = runRecord({ session_name: project, inputs: { text: "a".repeat(20_000) } });
    const aBody = JSON.stringify(a);
    // Request A: declared ~20 kB, half sent: it holds a slot and is charged its declared length.
    const sock = await rawRequest(
      s.url,
      `POST /runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(aBody)}\r\n\r\n` +
        aBody.slice(0, 10_000),
    );
    await until(() => s.collector.bodies().large === 1);
    expect(s.collector.bodies().bytes).toBe(Buffer.byteLength(aBody));
    // Request B: another ~20 kB would make ~40 kB, over the 30 kB budget: it waits with three slots free.
    const b = runRecord({ session_name: project, inputs: { text: "b".repeat(20_000) } });
    let bStatus = 0;
    const bDone = postJson(s.url, "/runs", b).then((r) => (bStatus = r.status));
    await until(() => s.collector.bodies().waiting === 1);
    expect(s.collector.bodies().large).toBe(1);
    // A small body needs no slot and is stored meanwhile.
    expect((await postJson(s.url, "/runs", runRecord({ session_name: project }))).status).toBe(202);
    expect(bStatus).toBe(0);
    expect(await stored(s, project)).toBe(1);
    // A completes and gives back its bytes; B is admitted and completes.
    const aAnswer = readStatus(sock);
    sock.write(aBody.slice(10_000));
    expect(await aAnswer).toBe(202);
    await bDone;
    expect(bStatus).toBe(202);
    expect(await stored(s, project)).toBe(3);
    await until(() => s.collector.bodies().large === 0);
    expect(s.collector.bodies().bytes).toBe(0);
    sock.destroy();
  });

  it("always admits one body alone, however far past the budget it is", async () => {
    const s = await collector({ limits: { largeBodyBytes: 1024, largeBodyBudgetBytes: 2048 } });
    const run = runRecord({ session_name: "alone", inputs: { text: "z".repeat(50_000) } });
    expect((await postJson(s.url, "/runs", run)).status).toBe(202);
    expect(await stored(s, "alone")).toBe(1);
    await until(() => s.collector.bodies().large === 0);
    expect(s.collector.bodies().bytes).toBe(0);
  });
});

describe("slow clients (item 14)", () => {
  it("has documented default timeouts", () => {
    expect(c.collector.server.headersTimeout).toBe(DEFAULT_TIMEOUTS.headersMs);
    expect(c.collector.server.requestTimeout).toBe(DEFAULT_TIMEOUTS.requestMs);
    expect(c.collector.server.keepAliveTimeout).toBe(DEFAULT_TIMEOUTS.keepAliveMs);
  });

  it("closes idle, stalled-header, stalled-body and idle keep-alive connections, storing nothing of a stalled body", async () => {
    const s = await collector({ timeouts: { headersMs: 300, requestMs: 600, keepAliveMs: 200, idleSocketMs: 400 } });
    const project = "stalled";
    const run = runRecord({ session_name: project });
    const body = JSON.stringify(run);
    const idle = await rawRequest(s.url, "");
    const headers = await rawRequest(s.url, "POST /runs HTTP/1.1\r\nHost: x\r\nContent-Ty");
    const stalled = await rawRequest(
      s.url,
      `POST /runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
    );
    const keepAlive = await rawRequest(s.url, "GET /info HTTP/1.1\r\nHost: x\r\n\r\n");
    const results = await Promise.all([idle, headers, stalled, keepAlive].map(closed));
    expect(results[3]).toMatch(/^HTTP\/1.1 200/); // answered, then closed when idle
    expect(results[2]).not.toMatch(/^HTTP\/1.1 2/);
    expect(await stored(s, project)).toBe(0);
  });
});

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

function rawRequest(base: string, text: string): Promise<Socket> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), "127.0.0.1", () => {
      if (text) sock.write(text);
      resolve(sock);
    });
    sock.on("error", reject);
  });
}

/** Everything the server sent, once it has closed the connection. */
function closed(sock: Socket): Promise<string> {
  let got = "";
  sock.setEncoding("utf8").on("data", (d: string) => (got += d));
  return new Promise((resolve) => sock.on("close", () => resolve(got)));
}

function readStatus(sock: Socket): Promise<number> {
  return new Promise((resolve) => {
    let got = "";
    const onData = (d: Buffer | string) => {
      got += d.toString();
      const m = /^HTTP\/1.1 (\d{3})/.exec(got);
      if (m) {
        sock.off("data", onData);
        resolve(Number(m[1]));
      }
    };
    sock.on("data", onData);
  });
}
