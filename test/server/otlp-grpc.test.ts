/**
 * The OTLP/gRPC receiver answers as the HTTP endpoints do, in gRPC's terms:
 * the real @grpc/grpc-js client calling the trace and logs services with the
 * OTel serializers' protobuf.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { startCollector, type Running } from "../helpers/collector.js";
import { startOtlpGrpc, type OtlpGrpcServer } from "../../src/server/otlp-grpc.js";
import { MemoryRateLimiter } from "../../src/ratelimit/limiter.js";
import { RetryInfo, RpcStatus, TraceRequest, TraceResponse } from "../../src/otlp/protobuf.js";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI } from "../helpers/cli.js";

let c: Running;
let server: OtlpGrpcServer;
let client: grpc.Client;

beforeAll(async () => {
  c = await startCollector();
  server = await startOtlpGrpc(0, "127.0.0.1", {
    store: c.collector.store,
    apiKey: "k",
    maxMessageBytes: 64 * 1024,
    maxJsonDepth: 64,
    rateLimits: { limiter: new MemoryRateLimiter(), region: "us", overrides: { "otel-traces": { limit: 2, windowMs: 60_000 } } },
  });
  client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await server?.close();
  await c?.close();
});

function spans(): Uint8Array {
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer("app");
  tracer.startSpan("chat gpt-4o", { attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o" } }).end();
  return ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans())!;
}

/** One unary call to the trace service; resolves to the error (or null) and the answer's bytes. */
function exportTraces(body: Uint8Array, md: Record<string, string>): Promise<{ err: grpc.ServiceError | null; bytes?: Buffer }> {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(md)) metadata.set(k, v);
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
      (b: Uint8Array) => Buffer.from(b),
      (b: Buffer) => b,
      body,
      metadata,
      (err, bytes) => resolve({ err, bytes }),
    ),
  );
}

describe("OTLP/gRPC receiver", () => {
  it("refuses a call without the key or with a wrong one (UNAUTHENTICATED), accepts x-api-key and a bearer token", async () => {
    expect((await exportTraces(spans(), {})).err?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await exportTraces(spans(), { "x-api-key": "nope" })).err?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await exportTraces(spans(), { "x-api-key": "k" })).err).toBeNull();
    expect((await exportTraces(spans(), { authorization: "Bearer k" })).err).toBeNull();
  });

  it("answers over the limit with RESOURCE_EXHAUSTED and a RetryInfo saying when to retry", async () => {
    const { err } = await exportTraces(spans(), { "x-api-key": "k" });
    expect(err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(err?.details).toMatch(/rate limit exceeded: 2 requests per 60 s .*otel-traces/);
    const status = RpcStatus.toObject(RpcStatus.decode(err!.metadata.get("grpc-status-details-bin")[0] as Buffer), { longs: Number }) as {
      code: number;
      details: { typeUrl: string; value: Uint8Array }[];
    };
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details[0]!.typeUrl).toBe("type.googleapis.com/google.rpc.RetryInfo");
    const retry = RetryInfo.toObject(RetryInfo.decode(status.details[0]!.value), { longs: Number }) as {
      retryDelay: { seconds?: number; nanos?: number };
    };
    const ms = (retry.retryDelay.seconds ?? 0) * 1000 + (retry.retryDelay.nanos ?? 0) / 1e6;
    expect(ms).toBeGreaterThan(50_000);
    expect(ms).toBeLessThanOrEqual(60_000);
  });
});

describe("OTLP/gRPC receiver: bad requests", () => {
  let s: OtlpGrpcServer;
  let cl: grpc.Client;
  beforeAll(async () => {
    s = await startOtlpGrpc(0, "127.0.0.1", { store: c.collector.store, maxMessageBytes: 4096, maxJsonDepth: 64 });
    cl = new grpc.Client(`127.0.0.1:${s.port}`, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
    cl.close();
    await s.close();
  });
  const call = (body: Uint8Array) =>
    new Promise<grpc.ServiceError | null>((resolve) =>
      cl.makeUnaryRequest(
        "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
        (b: Uint8Array) => Buffer.from(b),
        (b: Buffer) => b,
        body,
        new grpc.Metadata(),
        (err) => resolve(err),
      ),
    );

  it("answers a malformed message with INVALID_ARGUMENT and one over the size limit with RESOURCE_EXHAUSTED", async () => {
    const bad = await call(Buffer.from([0x0a, 0xff, 0xff]));
    expect(bad?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad?.details).toMatch(/malformed OTLP protobuf body/);
    expect((await call(Buffer.alloc(8192, 0x00)))?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(await call(new Uint8Array())).toBeNull();
  });

  it("stores the good spans of an export and answers the malformed ones in its partial success", async () => {
    const traceId = Buffer.from("5c8efff798038103d269b633813fc60c", "hex");
    const span = (spanId: string, name: string) => ({
      traceId,
      spanId: Buffer.from(spanId, "hex"),
      name,
      startTimeUnixNano: 1_700_000_000_000_000_000n.toString(),
      endTimeUnixNano: 1_700_000_001_000_000_000n.toString(),
    });
    const body = TraceRequest.encode(
      TraceRequest.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [span("aee19b7ec3c1b174", "good"), span("", "no span id")] }] }] }),
    ).finish();
    const answer = await new Promise<{ err: grpc.ServiceError | null; bytes?: Buffer }>((resolve) =>
      cl.makeUnaryRequest(
        "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
        (b: Uint8Array) => Buffer.from(b),
        (b: Buffer) => b,
        body,
        new grpc.Metadata(),
        (err, bytes) => resolve({ err, bytes }),
      ),
    );
    expect(answer.err).toBeNull();
    expect(TraceResponse.toObject(TraceResponse.decode(answer.bytes!), { longs: Number })).toEqual({
      partialSuccess: {
        rejectedSpans: 1,
        errorMessage: expect.stringMatching(/^resourceSpans\.0\.scopeSpans\.0\.spans\.1\.spanId: /) as string,
      },
    });
    expect((await c.collector.store.spansOfTrace(traceId.toString("hex"))).map((x) => x.name)).toEqual(["good"]);
  });
});

describe("tracepipe serve --otlp-grpc-port", () => {
  it("receives OTLP over gRPC beside HTTP when the flag is given", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "tp-grpc-serve-")), "traces.db");
    const child = spawn(process.execPath, [...CLI, "serve", "--port", "0", "--db", db, "--no-rate-limit", "--otlp-grpc-port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let out = "";
      // The readiness line of the gRPC receiver, not a fixed wait.
      const port = await new Promise<number>((resolve, reject) => {
        const onData = (d: string) => {
          out += d;
          const m = /OTLP\/gRPC receiver listening on [^\s]+:(\d+)/.exec(out);
          if (m) resolve(Number(m[1]));
        };
        child.stdout.setEncoding("utf8").on("data", onData);
        child.stderr.setEncoding("utf8").on("data", onData);
        child.once("exit", (code) => reject(new Error(`tracepipe serve exited (${code}): ${out}`)));
      });
      const cl = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const err = await new Promise<grpc.ServiceError | null>((resolve) =>
        cl.makeUnaryRequest(
          "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
          (b: Uint8Array) => Buffer.from(b),
          (b: Buffer) => b,
          spans(),
          new grpc.Metadata(),
          (e) => resolve(e),
        ),
      );
      cl.close();
      expect(err).toBeNull();
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);
});
