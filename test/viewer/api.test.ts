/** The viewer's JSON API and pages over the real collector and a real SQLite file. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { startCollector, type Running } from "../helpers/collector.js";
import { bulkTrace, XSS } from "./traces.js";

const KEY = "k-api";
let col: Running;

const get = (path: string, key: string | null = KEY) => fetch(col.url + path, { headers: key ? { "x-api-key": key } : {} });

/** A one-run trace starting `i` seconds after a fixed time, with a latency of `i*10` ms. */
function single(i: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  const id = randomUUID();
  const start = new Date(Date.parse("2026-11-20T00:00:00Z") + i * 1000).toISOString().replace("Z", "000Z");
  const end = new Date(Date.parse("2026-11-20T00:00:00Z") + i * 1000 + i * 10).toISOString().replace("Z", "000Z");
  return {
    id,
    trace_id: id,
    dotted_order: `${start.replace(/[-:.]/g, "")}${id}`,
    name: `t-${i}`,
    run_type: "chain",
    start_time: start,
    end_time: end,
    inputs: { i },
    outputs: { i },
    session_name: i % 2 ? "odd" : "even",
    ...over,
  };
}

beforeAll(async () => {
  col = await startCollector({ apiKey: KEY });
  const runs = Array.from({ length: 25 }, (_, i) =>
    single(i + 1, i === 6 ? { error: "boom in seven", name: "t-7" } : i === 9 ? { inputs: { q: "Needle in the haystack" } } : {}),
  );
  await col.collector.store.ingest({
    post: [...runs, ...bulkTrace(12, { name: "deep", project: "odd", startMs: Date.parse("2026-11-21T00:00:00Z") }), XSS.run],
  });
});
afterAll(async () => {
  await col.close();
});

async function all(query: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(`/api/viewer/traces?limit=4${query}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { traces: { name: string }[]; cursor: string | null };
    expect(page.traces.length).toBeLessThanOrEqual(4);
    names.push(...page.traces.map((t) => t.name));
    cursor = page.cursor;
  } while (cursor);
  return names;
}

describe("viewer API", () => {
  it("pages every trace exactly once by cursor, newest first", async () => {
    const names = await all("");
    expect(names).toHaveLength(27);
    expect(new Set(names).size).toBe(27);
    expect(names.slice(0, 5)).toEqual([XSS.name, "deep", "t-25", "t-24", "t-23"]);
    expect(names.at(-1)).toBe("t-1");
  });

  it("sorts by latency both ways with cursors", async () => {
    const asc = await all("&project=even&sort=latency&order=asc");
    expect(asc).toEqual(Array.from({ length: 12 }, (_, i) => `t-${2 * (i + 1)}`));
    const desc = await all("&project=even&sort=latency&order=desc");
    expect(desc).toEqual([...asc].reverse());
  });

  it("filters by project, name, errors, text, time range, model", async () => {
    expect((await all("&project=odd")).sort()).toEqual([...Array.from({ length: 13 }, (_, i) => `t-${2 * i + 1}`), "deep"].sort());
    expect(await all("&errors_only=true")).toEqual(["t-7"]);
    expect(await all("&q=needle")).toEqual(["t-10"]);
    expect(await all(`&start_time_gte=2026-11-20T00:00:03Z&start_time_lt=2026-11-20T00:00:06Z`)).toEqual(["t-5", "t-4", "t-3"]);
    expect(await all("&model=gpt-4o")).toEqual([XSS.name]);
    expect(await all("&name=DEE")).toEqual(["deep"]);
  });

  it("summarises a trace: runs, latency, tokens", async () => {
    const page = (await (await get("/api/viewer/traces?name=deep")).json()) as { traces: Record<string, unknown>[] };
    expect(page.traces[0]).toMatchObject({ name: "deep", run_count: 12, latency_ms: 2500, error: null, total_tokens: null });
    const xss = (await (await get("/api/viewer/traces?model=gpt-4o")).json()) as { traces: Record<string, unknown>[] };
    expect(xss.traces[0]).toMatchObject({ input_tokens: 9, output_tokens: 9, total_tokens: 18, models: ["gpt-4o"], providers: ["openai"] });
  });

  it("returns a trace's runs in tree order and 404 for an unknown trace", async () => {
    const deep = bulkTrace(3, { name: "tiny", project: "odd" });
    await col.collector.store.ingest({ post: deep });
    const res = await get(`/api/viewer/traces/${deep[0]!.id}`);
    const body = (await res.json()) as { runs: { id: string; parent_run_id: string | null }[] };
    expect(body.runs.map((r) => r.id)).toEqual(deep.map((r) => r.id));
    expect(body.runs[0]!.parent_run_id).toBeNull();
    expect((await get(`/api/viewer/traces/${randomUUID()}`)).status).toBe(404);
    expect((await get(`/api/viewer/runs/${randomUUID()}`)).status).toBe(404);
  });

  it("names the field of a bad query", async () => {
    const bad = await get("/api/viewer/traces?cursor=nope&sort=size");
    expect(bad.status).toBe(422);
    const { detail } = (await bad.json()) as { detail: { loc: string[] }[] };
    expect(detail.map((d) => d.loc.join("."))).toEqual(["query.sort"]);
    const cursor = await get("/api/viewer/traces?cursor=nope");
    expect(((await cursor.json()) as { detail: { loc: string[] }[] }).detail[0]!.loc).toEqual(["query", "cursor"]);
  });

  it("serves the page without the key but no run data without it", async () => {
    const page = await get("/", null);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(await page.text()).not.toMatch(/<script>|\son\w+=/);
    expect((await get("/viewer/app.js", null)).status).toBe(200);
    expect((await get("/viewer/..%2Fapp.ts", null)).status).toBe(401);
    expect((await get("/api/viewer/traces", null)).status).toBe(401);
    expect((await get("/api/viewer/traces", "wrong")).status).toBe(401);
    expect((await get("/viewer/nothing.js")).status).toBe(404);
  });

  it("is not cut off by SPEC §8's per-IP catch-all (100 / 60 s) when the collector runs without a key", async () => {
    const open = await startCollector({ rateLimits: true });
    try {
      const statuses = new Set<number>();
      for (let i = 0; i < 120; i++) statuses.add((await fetch(`${open.url}${i % 2 ? "/api/viewer/traces" : "/viewer/app.js"}`)).status);
      expect([...statuses]).toEqual([200]);
      // The rest of the collector still counts against it.
      let limited = false;
      for (let i = 0; i < 110 && !limited; i++) limited = (await fetch(`${open.url}/nothing`)).status === 429;
      expect(limited).toBe(true);
    } finally {
      await open.close();
    }
  });
});
