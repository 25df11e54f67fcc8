/**
 * OTLP log records of a trace that made no run (records without spans, or
 * beside a span no adapter reads) are kept, and shown on their trace: the
 * trace API answers their OpenTelemetry trace id with them, and the viewer's
 * trace page lists them (in chromium).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { startCollector, type Running } from "../helpers/collector.js";
import { chromiumPath, launch, screenshotPath } from "./browser.js";

const LONE = "6bf92f3577b34da6a3ce929d0e0e4736"; // records only, no span
const HTTP = "7bf92f3577b34da6a3ce929d0e0e4736"; // records beside an HTTP span, which makes no run

const record = (traceId: string, spanId: string, eventName: string, body: unknown, nanos: string) => ({
  timeUnixNano: nanos,
  traceId,
  spanId,
  eventName,
  severityNumber: 9,
  body:
    typeof body === "string"
      ? { stringValue: body }
      : { kvlistValue: { values: Object.entries(body as Record<string, string>).map(([key, v]) => ({ key, value: { stringValue: v } })) } },
  attributes: [{ key: "gen_ai.system", value: { stringValue: "openai" } }],
});

let col: Running;
const post = (path: string, body: unknown) =>
  fetch(`${col.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const getTrace = (id: string) => fetch(`${col.url}/api/viewer/traces/${id}`);

beforeAll(async () => {
  col = await startCollector();
  const logs = await post("/v1/logs", {
    resourceLogs: [
      {
        scopeLogs: [
          {
            scope: { name: "@opentelemetry/instrumentation-openai" },
            logRecords: [
              record(LONE, "10f067aa0ba902b7", "gen_ai.user.message", { content: "Weather in Paris?" }, "1764000000100000000"),
              record(LONE, "10f067aa0ba902b7", "gen_ai.choice", { finish_reason: "stop" }, "1764000000200000000"),
              record(HTTP, "20f067aa0ba902b7", "gen_ai.system.message", "Be terse.", "1764000000300000000"),
            ],
          },
        ],
      },
    ],
  });
  expect(logs.status).toBe(200);
  const span = {
    traceId: HTTP,
    spanId: "20f067aa0ba902b7",
    name: "GET /weather",
    kind: 2,
    startTimeUnixNano: "1764000000000000000",
    endTimeUnixNano: "1764000001000000000",
    attributes: [{ key: "http.request.method", value: { stringValue: "GET" } }],
  };
  const spans = await post("/v1/traces", {
    resourceSpans: [{ scopeSpans: [{ scope: { name: "@opentelemetry/instrumentation-http" }, spans: [span] }] }],
  });
  expect(spans.status).toBe(200);
}, 60_000);
afterAll(async () => {
  await col?.close();
});

describe("log records of a trace with no runs", () => {
  it("the trace API answers their trace id with the records, oldest first, and no runs", async () => {
    const res = await getTrace(LONE);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { trace_id: string; runs: unknown[]; logs: Record<string, unknown>[] };
    expect(body.trace_id).toBe(LONE);
    expect(body.runs).toEqual([]);
    expect(body.logs).toEqual([
      {
        time: "2025-11-24T16:00:00.100000Z",
        span_id: "10f067aa0ba902b7",
        event_name: "gen_ai.user.message",
        severity: 9,
        body: { content: "Weather in Paris?" },
        attributes: { "gen_ai.system": "openai" },
        scope: { name: "@opentelemetry/instrumentation-openai", version: "" },
      },
      {
        time: "2025-11-24T16:00:00.200000Z",
        span_id: "10f067aa0ba902b7",
        event_name: "gen_ai.choice",
        severity: 9,
        body: { finish_reason: "stop" },
        attributes: { "gen_ai.system": "openai" },
        scope: { name: "@opentelemetry/instrumentation-openai", version: "" },
      },
    ]);
  });

  it("a trace whose only span made no run shows its records too; an unknown trace id is still a 404", async () => {
    expect(await col.collector.store.countRuns("default")).toBe(0);
    const body = (await (await getTrace(HTTP)).json()) as { runs: unknown[]; logs: { event_name: string; body: unknown }[] };
    expect(body.runs).toEqual([]);
    expect(body.logs.map((l) => [l.event_name, l.body])).toEqual([["gen_ai.system.message", "Be terse."]]);
    expect((await getTrace("0123456789abcdef0123456789abcdef")).status).toBe(404);
  });

  describe.skipIf(!chromiumPath)("in the viewer", () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launch();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
    });

    it("the trace page lists the records with their event names and bodies", async () => {
      const page = await browser.newPage();
      await page.goto(`${col.url}/#/trace/${LONE}`);
      const records = page.locator(".log-records .log-record");
      await records.first().waitFor();
      expect(await records.count()).toBe(2);
      expect(await records.nth(0).locator(".log-event").innerText()).toBe("gen_ai.user.message");
      expect(await records.nth(0).locator(".log-body").innerText()).toContain("Weather in Paris?");
      expect(await records.nth(1).locator(".log-event").innerText()).toBe("gen_ai.choice");
      expect(await page.locator("main").innerText()).toContain("2 log records");
      await page.screenshot({ path: screenshotPath("trace-log-records-without-runs.png"), fullPage: true });
    });
  });
});
