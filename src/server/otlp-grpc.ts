/**
 * The OTLP/gRPC receiver (`serve --otlp-grpc-port N`): the trace and logs
 * services' Export methods, over @grpc/grpc-js with the OTLP messages that
 * src/otlp/ already decodes (protobufjs; no proto files, no proto-loader).
 * It answers as the HTTP endpoints do, in gRPC's terms:
 *
 * | HTTP                         | gRPC                                            |
 * |------------------------------|-------------------------------------------------|
 * | X-Api-Key missing/wrong, 401 | UNAUTHENTICATED (`x-api-key` or `authorization: Bearer` metadata) |
 * | malformed or too deep, 400   | INVALID_ARGUMENT                                |
 * | body too large, 413          | RESOURCE_EXHAUSTED (grpc-js's message limit)    |
 * | rate limit, 429 Retry-After  | RESOURCE_EXHAUSTED with google.rpc.RetryInfo    |
 * | shutting down, 503           | UNAVAILABLE                                     |
 * | busy (--max-in-flight), 503  | UNAVAILABLE with google.rpc.RetryInfo and `grpc-retry-pushback-ms` |
 *
 * Export calls draw on the HTTP side's budget of requests in flight, so one
 * collector's work in flight is bounded whichever way it comes. A call past
 * the bound is refused before its message is decoded. UNAVAILABLE is what
 * OTLP exporters retry without condition (RESOURCE_EXHAUSTED only with a
 * RetryInfo); the RetryInfo says when, as the OTLP specification has it, and
 * `grpc-retry-pushback-ms` says it to gRPC clients that retry by a service
 * config's retry policy.
 *
 * Loaded only when the flag is given: nothing else imports this module.
 */
import * as grpc from "@grpc/grpc-js";
import { ValidationError } from "../errors.js";
import type { Signal } from "../otlp/decode.js";
import { decodeProtobuf } from "../otlp/decode.js";
import { PROJECT_HEADER } from "../otlp/plain.js";
import { exportResponse, retryStatus } from "../otlp/protobuf.js";
import { storeDocument, type OtlpReceiveStore } from "../otlp/receive.js";
import type { RateLimiter } from "../ratelimit/limiter.js";
import { matchLimit, type Region } from "../ratelimit/match.js";
import { tooDeep } from "./depth.js";
import { secretMatches } from "./middleware/auth.js";
import { BUSY_RETRY_AFTER_S, type InFlightBudget } from "./middleware/in-flight.js";

export interface OtlpGrpcOptions {
  store: OtlpReceiveStore;
  /** When set, every call needs it as `x-api-key` (or `authorization: Bearer <key>`) metadata. */
  apiKey?: string;
  /** Largest accepted message, bytes (the collector's maxBodyBytes). */
  maxMessageBytes: number;
  maxJsonDepth?: number;
  /** SPEC §8 limits, shared with the HTTP side (the same limiter, so one budget per key); absent: none. */
  rateLimits?: { limiter: RateLimiter; region: Region; overrides?: Record<string, { limit: number; windowMs: number }> };
  /** The collector's bound on requests in flight (Collector.inFlightBudget), shared with HTTP; absent: no bound. */
  inFlight?: InFlightBudget;
}

export interface OtlpGrpcServer {
  port: number;
  close(): Promise<void>;
}

const SERVICES: Record<Signal, { path: string; httpPath: string; response: Uint8Array }> = {
  traces: {
    path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
    httpPath: "/otel/v1/traces",
    response: exportResponse("traces", {}),
  },
  logs: {
    path: "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
    httpPath: "/otel/v1/logs",
    response: exportResponse("logs", {}),
  },
};

function definition(signal: Signal): grpc.ServiceDefinition {
  return {
    Export: {
      path: SERVICES[signal].path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (v: Buffer) => v,
      // Decoded by the handler, once the call is admitted: a refused call costs no decoding.
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: (v: Uint8Array) => Buffer.from(v),
      responseDeserialize: (bytes: Buffer) => bytes,
    },
  };
}

class CallError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
    readonly metadata?: grpc.Metadata,
  ) {
    super(message);
  }
}

function keyOf(md: grpc.Metadata): string | undefined {
  const key = md.get("x-api-key")[0];
  if (typeof key === "string") return key;
  const auth = md.get("authorization")[0];
  if (typeof auth === "string") return auth.replace(/^Bearer\s+/i, "");
  return undefined;
}

export async function startOtlpGrpc(port: number, host: string, o: OtlpGrpcOptions): Promise<OtlpGrpcServer> {
  let closing = false;
  const server = new grpc.Server({ "grpc.max_receive_message_length": o.maxMessageBytes });

  async function rateLimit(signal: Signal, key: string | undefined, ip: string): Promise<void> {
    if (!o.rateLimits) return;
    const headers: Record<string, string> = key === undefined ? {} : { "x-api-key": key };
    const m = matchLimit({ method: "POST", path: SERVICES[signal].httpPath, headers, ip }, o.rateLimits.region);
    if (!m) return;
    const over = o.rateLimits.overrides?.[m.rule.id];
    const limit = over?.limit ?? m.limit;
    const windowMs = over?.windowMs ?? m.windowMs;
    const r = await o.rateLimits.limiter.tryAcquire(m.key, 1, limit, windowMs);
    if (r.ok) return;
    const message = `rate limit exceeded: ${limit} requests per ${windowMs / 1000} s for ${m.rule.category} (${m.rule.id}); retry after ${Math.ceil(r.retryAfterMs)} ms`;
    const md = new grpc.Metadata();
    md.set("grpc-status-details-bin", retryStatus(grpc.status.RESOURCE_EXHAUSTED, message, Math.max(1, Math.ceil(r.retryAfterMs))));
    throw new CallError(grpc.status.RESOURCE_EXHAUSTED, message, md);
  }

  function busy(): CallError {
    const budget = o.inFlight!;
    const message = `the collector is busy: ${budget.inFlight} requests in flight, its bound (serve --max-in-flight); retry after ${BUSY_RETRY_AFTER_S} s`;
    const md = new grpc.Metadata();
    md.set("grpc-status-details-bin", retryStatus(grpc.status.UNAVAILABLE, message, BUSY_RETRY_AFTER_S * 1000));
    md.set("grpc-retry-pushback-ms", String(BUSY_RETRY_AFTER_S * 1000));
    return new CallError(grpc.status.UNAVAILABLE, message, md);
  }

  async function exportCall(signal: Signal, call: grpc.ServerUnaryCall<Buffer, Uint8Array>): Promise<Uint8Array> {
    if (closing) throw new CallError(grpc.status.UNAVAILABLE, "the collector is shutting down");
    if (!o.inFlight) return admitted(signal, call);
    if (!o.inFlight.tryEnter()) throw busy();
    try {
      return await admitted(signal, call);
    } finally {
      o.inFlight.leave();
    }
  }

  async function admitted(signal: Signal, call: grpc.ServerUnaryCall<Buffer, Uint8Array>): Promise<Uint8Array> {
    const key = keyOf(call.metadata);
    if (o.apiKey !== undefined && !secretMatches(key, o.apiKey))
      throw new CallError(grpc.status.UNAUTHENTICATED, key === undefined ? "missing x-api-key metadata" : "invalid API key");
    await rateLimit(signal, key, call.getPeer());
    const doc = decodeProtobuf(signal, call.request);
    const max = o.maxJsonDepth ?? Infinity;
    if (await tooDeep(doc, max)) throw new CallError(grpc.status.INVALID_ARGUMENT, `OTLP request nested more than ${max} levels deep`);
    const project = call.metadata.get(PROJECT_HEADER)[0];
    const partial = await storeDocument(o.store, signal, doc, typeof project === "string" && project ? project : undefined);
    return Object.keys(partial).length ? exportResponse(signal, partial) : SERVICES[signal].response;
  }

  const handler =
    (signal: Signal): grpc.handleUnaryCall<Buffer, Uint8Array> =>
    (call, callback) => {
      exportCall(signal, call).then(
        (response) => callback(null, response),
        (err: unknown) => {
          if (err instanceof CallError) return callback({ code: err.code, details: err.message, metadata: err.metadata });
          if (err instanceof ValidationError)
            return callback({ code: grpc.status.INVALID_ARGUMENT, details: err.issues[0]?.msg ?? err.message });
          console.error(`tracepipe serve: OTLP/gRPC ${signal} export failed:`, err);
          callback({ code: grpc.status.INTERNAL, details: "internal error; see the collector's log" });
        },
      );
    };

  server.addService(definition("traces"), { Export: handler("traces") });
  server.addService(definition("logs"), { Export: handler("logs") });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host.includes(":") ? `[${host}]` : host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.tryShutdown(() => resolve());
      }),
  };
}
