/**
 * The bound on work in flight (`serve --max-in-flight`) holds for OTLP/gRPC
 * too, in one budget with HTTP: the real OTLP gRPC exporter, against a
 * `serve` process on PostgreSQL with a small bound, is refused past it with
 * UNAVAILABLE, a google.rpc.RetryInfo and `grpc-retry-pushback-ms`; sent
 * again after that delay (the OTLP specification's retry, which
 * @opentelemetry/exporter-trace-otlp-grpc leaves to its caller: it reports
 * every gRPC failure as final), every span arrives, once. A gRPC client that
 * retries by a service config's retry policy waits the pushback.
 */
import { request, type ClientRequest } from "node:http";
import * as grpc from "@grpc/grpc-js";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { context, trace } from "@opentelemetry/api";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RetryInfo, RpcStatus } from "../../src/otlp/protobuf.js";
import { sharedPostgres, skipWithoutPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { runRecord } from "../helpers/runs.js";
import { startServeChildren, stopServeChildren, type ServeChild } from "../helpers/serve-processes.js";

const MAX_IN_FLIGHT = 2;
const SPANS_PER_TRACE = 10;
const BURST = 16;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every span a GenAI call, so each becomes a run. */
const CHAT = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o" };

/** One trace's finished spans (a root and its children), made by the real SDK. */
function traceSpans(name: string): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer("app");
  const root = tracer.startSpan(name, { attributes: CHAT });
  const inRoot = trace.setSpan(context.active(), root);
  for (let i = 1; i < SPANS_PER_TRACE; i++) tracer.startSpan(`${name} step ${i}`, { attributes: CHAT }, inRoot).end();
  root.end();
  return memory.getFinishedSpans();
}

function exportOnce(exporter: OTLPTraceExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

/** The delay a refusal asks for: RetryInfo's, in ms (undefined when the refusal carries none). */
function retryDelayMs(err: grpc.ServiceError): number | undefined {
  const bin = err.metadata?.get("grpc-status-details-bin")[0];
  if (!(bin instanceof Buffer)) return undefined;
  const status = RpcStatus.toObject(RpcStatus.decode(bin), { longs: Number }) as {
    code: number;
    details: { typeUrl: string; value: Uint8Array }[];
  };
  expect(status.code).toBe(grpc.status.UNAVAILABLE);
  const info = status.details.find((d) => d.typeUrl === "type.googleapis.com/google.rpc.RetryInfo");
  if (!info) return undefined;
  const { retryDelay } = RetryInfo.toObject(RetryInfo.decode(info.value), { longs: Number }) as {
    retryDelay: { seconds?: number; nanos?: number };
  };
  return (retryDelay.seconds ?? 0) * 1000 + (retryDelay.nanos ?? 0) / 1e6;
}

/** Export, and on UNAVAILABLE with a RetryInfo wait as it says and send the same spans again. Resolves to the refusals seen. */
async function exportRetrying(exporter: OTLPTraceExporter, spans: ReadableSpan[]): Promise<number> {
  for (let refused = 0; ; refused++) {
    const r = await exportOnce(exporter, spans);
    if (r.code === ExportResultCode.SUCCESS) return refused;
    const err = r.error as grpc.ServiceError;
    expect(err?.code, String(err)).toBe(grpc.status.UNAVAILABLE);
    const delay = retryDelayMs(err);
    expect(delay).toBeGreaterThan(0);
    expect(refused).toBeLessThan(60);
    await sleep(delay!);
  }
}

describe.skipIf(skipWithoutPostgres())("OTLP/gRPC past the collector's bound on requests in flight", () => {
  let cluster: PostgresDatabases;
  let url: string;
  let db: pg.Client;
  let children: ServeChild[] = [];
  let grpcUrl: string;
  beforeAll(async () => {
    cluster = await sharedPostgres();
    url = await cluster.database();
    children = await startServeChildren(1, [
      "--store",
      url,
      "--no-rate-limit",
      "--max-in-flight",
      String(MAX_IN_FLIGHT),
      "--otlp-grpc-port",
      "0",
    ]);
    for (let polls = 0; !/OTLP\/gRPC receiver listening on [^\s]+:(\d+)/.test(children[0]!.output()); polls++) {
      if (polls > 600) throw new Error(`no OTLP/gRPC receiver: ${children[0]!.output()}`);
      await sleep(50);
    }
    grpcUrl = `http://127.0.0.1:${/OTLP\/gRPC receiver listening on [^\s]+:(\d+)/.exec(children[0]!.output())![1]}`;
    db = new pg.Client({ connectionString: url });
    await db.connect();
  }, 90_000);
  afterAll(async () => {
    await stopServeChildren(children);
    await db?.end().catch(() => undefined);
  }, 60_000);

  const runsOf = async (project: string) =>
    (await db.query<{ id: string }>("SELECT id FROM runs WHERE session_name = $1", [project])).rows.map((r) => r.id);

  it("refuses an Export with UNAVAILABLE and a retry hint while HTTP requests hold the whole bound, and stores its spans once sent again", async () => {
    const project = "grpc-shares-the-bound";
    const exporter = new OTLPTraceExporter({ url: grpcUrl, metadata: metadataOf(project) });
    const held = holdBound(children[0]!.url);
    // Until the held requests are admitted, an export may still get in (and is stored, counted below).
    let sent = 0;
    let refusal: grpc.ServiceError | undefined;
    let refusedSpans: ReadableSpan[] = [];
    for (let tries = 0; !refusal; tries++) {
      expect(tries, "no Export was refused while HTTP requests held the bound").toBeLessThan(100);
      const spans = traceSpans(`held-${tries}`);
      const r = await exportOnce(exporter, spans);
      if (r.code === ExportResultCode.SUCCESS) sent += spans.length;
      else {
        refusal = r.error as grpc.ServiceError;
        refusedSpans = spans;
      }
    }
    expect(refusal.code).toBe(grpc.status.UNAVAILABLE);
    expect(refusal.details).toMatch(/busy.*--max-in-flight/);
    expect(refusal.metadata.get("grpc-retry-pushback-ms")).toEqual(["1000"]);
    expect(retryDelayMs(refusal)).toBe(1000);

    for (const status of await held.release()) expect(status).toBeLessThan(300);
    expect(await exportRetrying(exporter, refusedSpans)).toBeLessThanOrEqual(1);
    sent += refusedSpans.length;
    await exporter.shutdown();

    const ids = await runsOf(project);
    expect(ids).toHaveLength(sent);
    expect(new Set(ids).size).toBe(sent);
    expect(await runsOf("held-http")).toHaveLength(MAX_IN_FLIGHT);
  }, 60_000);

  it("refuses the overflow of a burst of exports, and every span arrives once when the refused batches are sent again after the hint", async () => {
    const project = "grpc-burst";
    const exporters = Array.from({ length: BURST }, () => new OTLPTraceExporter({ url: grpcUrl, metadata: metadataOf(project) }));
    const batches = exporters.map((_, i) => [...traceSpans(`burst-${i}-a`), ...traceSpans(`burst-${i}-b`)]);
    const refusals = await Promise.all(exporters.map((e, i) => exportRetrying(e, batches[i]!)));
    await Promise.all(exporters.map((e) => e.shutdown()));
    expect(refusals.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const total = batches.reduce((n, b) => n + b.length, 0);
    const ids = await runsOf(project);
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
  }, 90_000);

  it("makes a gRPC client that retries by a service config's policy wait the pushback before trying again", async () => {
    const project = "grpc-pushback";
    // Retries a few ms apart unless the server pushes back: without the pushback every attempt would meet the held bound.
    const serviceConfig = {
      methodConfig: [
        {
          name: [{ service: "opentelemetry.proto.collector.trace.v1.TraceService" }],
          retryPolicy: {
            maxAttempts: 5,
            initialBackoff: "0.01s",
            maxBackoff: "0.05s",
            backoffMultiplier: 2,
            retryableStatusCodes: ["UNAVAILABLE"],
          },
        },
      ],
    };
    const client = new grpc.Client(grpcUrl.replace(/^http:\/\//, ""), grpc.credentials.createInsecure(), {
      "grpc.service_config": JSON.stringify(serviceConfig),
    });
    const call = (spans: ReadableSpan[]) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        client.makeUnaryRequest(
          "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
          (b: Uint8Array) => Buffer.from(b),
          (b: Buffer) => b,
          ProtobufTraceSerializer.serializeRequest(spans)!,
          metadataOf(project),
          (err) => resolve(err),
        ),
      );
    try {
      const warm = traceSpans("pushback-warm-up");
      expect(await call(warm)).toBeNull(); // the connection is up before the bound is held
      let stored = warm.length;
      const held = holdBound(children[0]!.url);
      // The bound is held once a plain call (no retry policy) is refused.
      const probe = new OTLPTraceExporter({ url: grpcUrl, metadata: metadataOf(project) });
      for (let tries = 0; ; tries++) {
        expect(tries).toBeLessThan(100);
        const probeSpans = traceSpans(`pushback-probe-${tries}`);
        if ((await exportOnce(probe, probeSpans)).code !== ExportResultCode.SUCCESS) break;
        stored += probeSpans.length;
      }
      await probe.shutdown();
      const spans = traceSpans("pushback");
      const started = performance.now();
      const answered = call(spans);
      const RELEASE_AFTER_MS = 600;
      await sleep(RELEASE_AFTER_MS);
      for (const status of await held.release()) expect(status).toBeLessThan(300);
      expect(await answered).toBeNull();
      // Refused first, then tried again only after the pushback's second: past the release, not a few ms after the refusal.
      expect(performance.now() - started).toBeGreaterThanOrEqual(950);
      const ids = await runsOf(project);
      expect(ids).toHaveLength(stored + spans.length);
    } finally {
      client.close();
    }
  }, 60_000);
});

/**
 * Requests that take every place in flight and keep it: headers and the start of a body, the rest only on
 * release. A held request that met an export in flight is refused (503, answered before its body ended)
 * and sent again, so the whole bound ends up held whatever the order of arrival.
 */
function holdBound(collectorUrl: string): { release(): Promise<number[]> } {
  let releasing = false;
  const slots = Array.from({ length: MAX_IN_FLIGHT }, (_, i) => {
    const body = JSON.stringify(runRecord({ session_name: "held-http", name: `held ${i}` }));
    const slot = { req: undefined as unknown as ClientRequest, answered: undefined as unknown as Promise<number> };
    slot.answered = new Promise<number>((resolve, reject) => {
      const open = () => {
        const req = request(`${collectorUrl}/runs`, {
          method: "POST",
          headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
        });
        req.once("response", (res) => {
          res.resume();
          if (releasing || res.statusCode !== 503) return resolve(res.statusCode!);
          // Refused before release: try again until this place is held.
          req.destroy();
          setTimeout(open, 20);
        });
        req.once("error", (err) => {
          if (!req.destroyed || releasing) reject(err);
        });
        req.write(body.slice(0, 10));
        slot.req = req;
      };
      open();
    });
    return { slot, rest: body.slice(10) };
  });
  return {
    release: () => {
      releasing = true;
      for (const { slot, rest } of slots) slot.req.end(rest);
      return Promise.all(slots.map(({ slot }) => slot.answered));
    },
  };
}

function metadataOf(project: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("x-tracepipe-project", project);
  return md;
}
