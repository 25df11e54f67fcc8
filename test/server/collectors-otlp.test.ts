/**
 * OTLP across collectors: the spans of 200 traces spread over three `serve`
 * processes on one PostgreSQL, in random order, some roots late and some
 * never sent (the rootless sweep makes those), become exactly the runs one
 * collector makes of the same requests on a database of its own: every
 * stored column but the receipt times, byte for byte.
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seeded, sendAnywhere, shuffled } from "../helpers/any-collector.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { startServeChildren, stopServeChildren, type ServeChild } from "../helpers/serve-processes.js";

const TRACES = 200;
const PROJECT = "otlp-side-by-side";
const ROOTLESS_AFTER_MS = 1500;
const NOW = BigInt(Date.parse("2026-11-27T12:00:00Z")) * 1_000_000n;

const hex = (s: string, chars: number) => createHash("sha256").update(s).digest("hex").slice(0, chars);

type Span = Record<string, unknown>;
function span(trace: number, name: string, parent: string | undefined, offsetUs: number, chat: boolean): Span {
  const start = NOW + BigInt(trace) * 10_000_000n + BigInt(offsetUs) * 1000n;
  const attributes = chat
    ? [
        { key: "gen_ai.operation.name", value: { stringValue: "chat" } },
        { key: "gen_ai.provider.name", value: { stringValue: "openai" } },
        { key: "gen_ai.request.model", value: { stringValue: "gpt-4o" } },
        {
          key: "gen_ai.input.messages",
          value: { stringValue: JSON.stringify([{ role: "user", parts: [{ type: "text", content: `${name} of trace ${trace}` }] }]) },
        },
        {
          key: "gen_ai.output.messages",
          value: {
            stringValue: JSON.stringify([
              { role: "assistant", parts: [{ type: "text", content: `answer ${trace}` }], finish_reason: "stop" },
            ]),
          },
        },
        { key: "gen_ai.usage.input_tokens", value: { intValue: 7 } },
        { key: "gen_ai.usage.output_tokens", value: { intValue: 3 } },
      ]
    : [{ key: "gen_ai.operation.name", value: { stringValue: "invoke_agent" } }];
  return {
    traceId: hex(`trace ${trace}`, 32),
    spanId: hex(`span ${trace} ${name}`, 16),
    ...(parent ? { parentSpanId: parent } : {}),
    name,
    kind: 1,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 900_000n),
    attributes,
  };
}

/** A root agent span, two calls under it and one under the first call; `root` says whether the root is sent at all. */
function traceSpans(t: number): { root: Span; rest: Span[] } {
  const root = span(t, "agent", undefined, 0, false);
  const a = span(t, "call-a", root.spanId as string, 10, true);
  const b = span(t, "call-b", root.spanId as string, 20, true);
  const c = span(t, "call-c", a.spanId as string, 15, true);
  return { root, rest: [a, b, c] };
}

const body = (spans: Span[]) =>
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "side-by-side" } }] },
        scopeSpans: [{ scope: { name: "test" }, spans }],
      },
    ],
  });

/** The requests: spans of every trace mixed and cut into small requests; late roots after the rest, with a pause; some roots never. */
function requests(random: () => number): { early: string[]; late: string[]; expectedRuns: number } {
  const early: Span[] = [];
  const late: Span[] = [];
  let expectedRuns = 0;
  for (let t = 0; t < TRACES; t++) {
    const { root, rest } = traceSpans(t);
    early.push(...rest);
    expectedRuns += rest.length;
    if (t % 3 === 2) continue; // never sent: the sweep converts the calls as they are
    expectedRuns++;
    (t % 3 === 1 ? late : early).push(root);
  }
  const cut = (spans: Span[]) => {
    const out: string[] = [];
    for (let i = 0; i < spans.length;) {
      const n = 1 + Math.floor(random() * 4);
      out.push(body(spans.slice(i, i + n)));
      i += n;
    }
    return out;
  };
  return { early: cut(shuffled(early, random)), late: cut(shuffled(late, random)), expectedRuns };
}

async function sendAll(children: readonly ServeChild[], bodies: readonly string[], random: () => number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < bodies.length; i = next++) {
        const r = await sendAnywhere(
          children,
          "POST",
          "/otel/v1/traces",
          bodies[i],
          { "content-type": "application/json", "x-tracepipe-project": PROJECT },
          { random },
        );
        expect(r.status, r.body).toBe(200);
      }
    }),
  );
}

/** Every stored column of the project's runs but the receipt times, sorted by id. */
async function dump(db: pg.Client): Promise<string[]> {
  const r = await db.query(
    `SELECT id, trace_start, trace_id, parent_run_id, dotted_order, name, run_type, session_name, start_time, end_time, error, has_post, inputs, outputs, events, tags, extra, serialized, other, exact,
            detected_format, normalized_inputs, normalized_outputs, normalize_error, first_token_time, model, provider, usage, total_cost, latency_ms
       FROM runs WHERE session_name = $1 ORDER BY id`,
    [PROJECT],
  );
  return r.rows.map((row) => JSON.stringify(row));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until no trace waits for a root and the run count has reached `n`. */
async function settled(db: pg.Client, n: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const waiting = Number((await db.query("SELECT count(*) AS n FROM otel_rootless")).rows[0].n);
    const runs = Number((await db.query("SELECT count(*) AS n FROM runs WHERE session_name = $1", [PROJECT])).rows[0].n);
    if (waiting === 0 && runs >= n) return;
    if (Date.now() > deadline) throw new Error(`not settled: ${waiting} traces wait for a root, ${runs} of ${n} runs`);
    await sleep(200);
  }
}

describe.skipIf(skipWithoutPostgres())("OTLP traces spread over three collectors", () => {
  let cluster: PostgresDatabases;
  const urls: string[] = [];
  let three: ServeChild[] = [];
  let one: ServeChild[] = [];
  beforeAll(async () => {
    cluster = await sharedPostgres();
    urls.push(await cluster.database(), await cluster.database());
    const args = ["--no-rate-limit", "--rootless-after", String(ROOTLESS_AFTER_MS)];
    three = await startServeChildren(3, ["--store", urls[0]!, ...args]);
    one = await startServeChildren(1, ["--store", urls[1]!, ...args]);
  }, 90_000);
  afterAll(async () => {
    await stopServeChildren([...three, ...one]);
  }, 60_000);

  it("makes the runs one collector makes, whatever collector each span reaches and in whatever order", async () => {
    const { early, late, expectedRuns } = requests(seeded(7));
    const feed = async (children: ServeChild[], seed: number) => {
      const random = seeded(seed);
      await sendAll(children, early, random);
      // Late roots: after their calls had time to be swept as roots of their own.
      await sleep(ROOTLESS_AFTER_MS * 2);
      await sendAll(children, late, random);
    };
    await Promise.all([feed(three, 1), feed(one, 2)]);
    const dbs = urls.map((connectionString) => new pg.Client({ connectionString }));
    try {
      for (const db of dbs) await db.connect();
      await Promise.all(dbs.map((db) => settled(db, expectedRuns)));
      const [spread, single] = await Promise.all(dbs.map(dump));
      expect(single).toHaveLength(expectedRuns);
      expect(spread).toHaveLength(expectedRuns);
      // Byte for byte, and the shape one expects: a rooted trace's calls under its agent, a rootless trace's first calls as roots.
      expect(spread).toEqual(single);
      const runs = single!.map((s) => JSON.parse(s) as { name: string; parent_run_id: string | null; dotted_order: string });
      expect(runs.filter((r) => r.name === "agent")).toHaveLength(expectedRuns - TRACES * 3);
      expect(runs.filter((r) => r.name === "call-c").every((r) => r.parent_run_id && r.dotted_order.split(".").length >= 2)).toBe(true);
      expect(runs.filter((r) => !r.parent_run_id)).toHaveLength(expectedRuns - TRACES * 3 + 2 * Math.floor((TRACES + 0) / 3));
    } finally {
      await Promise.all(dbs.map((db) => db.end().catch(() => undefined)));
    }
  }, 120_000);
});
