/**
 * createOtlpTraceExporter(): an OTLPTraceExporter (OTLP/HTTP with JSON bodies) that
 * sends to tracepipe's `/otel/v1/traces`, for users who keep their own span
 * pipeline and want tracepipe as one of its destinations.
 *
 * Where it sends, first that applies:
 *   1. `endpoint` given: `{endpoint}/otel/v1/traces`;
 *   2. OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as it is (the OTLP spec's rule for the signal-specific variable);
 *   3. OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended;
 *   4. TRACEPIPE_ENDPOINT with `/otel/v1/traces` appended.
 * Headers: OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS
 * over it (`k=v` lists, comma-separated, values percent-decoded), then the
 * explicit `headers`; `x-api-key` from `apiKey` or TRACEPIPE_API_KEY.
 *
 * Every export takes one unit from a rate limiter first, for SPEC §8's row for
 * POST /otel/v1/traces (2000 / 10 s per API key), so a busy BatchSpanProcessor
 * waits instead of collecting 429s.
 */
import { envValue } from "../env.js";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { ConfigError } from "../errors.js";
import { arrivalWindowMs, MemoryRateLimiter, type RateLimiter } from "../ratelimit/limiter.js";
import { matchLimit } from "../ratelimit/match.js";
import { PROJECT_HEADER } from "../otlp/plain.js";
import type { ExportOutcome, SpanExporterShape } from "./sdk-shapes.js";

export interface OtlpTraceExporterOptions {
  /** tracepipe endpoint (the collector or the hosted API); `/otel/v1/traces` is appended. */
  endpoint?: string;
  apiKey?: string;
  /** Sent as `x-tracepipe-project`; the collector records it with the spans. */
  project?: string;
  headers?: Record<string, string>;
  /** Shared limiter (e.g. a RedisRateLimiter across processes); a private in-memory one by default. */
  limiter?: RateLimiter;
  /** Override SPEC §8's limit for this path. */
  rateLimit?: { limit: number; windowMs: number };
  timeoutMillis?: number;
  /** Environment to read (default process.env). */
  env?: Record<string, string | undefined>;
}

export { PROJECT_HEADER };

/** `k1=v1,k2=v2` as the OTLP exporter spec writes headers; values are percent-decoded. */
export function parseOtlpHeaders(value: string, variable: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [i, raw] of value.split(",").entries()) {
    if (!raw.trim()) continue;
    const eq = raw.indexOf("=");
    if (eq <= 0)
      throw new ConfigError([{ loc: [variable, i], msg: `expected key=value, got ${JSON.stringify(raw.trim())}`, type: "value_error" }]);
    let v: string;
    try {
      v = decodeURIComponent(raw.slice(eq + 1).trim());
    } catch {
      throw new ConfigError([{ loc: [variable, i], msg: `bad percent-encoding in ${JSON.stringify(raw.trim())}`, type: "value_error" }]);
    }
    out[raw.slice(0, eq).trim().toLowerCase()] = v;
  }
  return out;
}

export function resolveOtlpTarget(o: OtlpTraceExporterOptions = {}): { url: string; headers: Record<string, string> } {
  const env = o.env ?? process.env;
  const trim = (u: string) => u.trim().replace(/\/+$/, "");
  let url: string;
  if (o.endpoint) url = `${trim(o.endpoint)}/otel/v1/traces`;
  else if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.trim();
  else if (env.OTEL_EXPORTER_OTLP_ENDPOINT) url = `${trim(env.OTEL_EXPORTER_OTLP_ENDPOINT)}/v1/traces`;
  else if (envValue("TRACEPIPE_ENDPOINT", env)) url = `${trim(envValue("TRACEPIPE_ENDPOINT", env)!)}/otel/v1/traces`;
  else {
    throw new ConfigError([
      {
        loc: ["endpoint"],
        msg: "no endpoint: pass {endpoint} or set OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT or TRACEPIPE_ENDPOINT",
        type: "missing",
      },
    ]);
  }
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error(u.protocol);
  } catch {
    throw new ConfigError([{ loc: ["endpoint"], msg: `not an http(s) URL: ${JSON.stringify(url)}`, type: "url_parsing" }]);
  }
  const headers: Record<string, string> = {
    ...(env.OTEL_EXPORTER_OTLP_HEADERS ? parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, "OTEL_EXPORTER_OTLP_HEADERS") : {}),
    ...(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS
      ? parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, "OTEL_EXPORTER_OTLP_TRACES_HEADERS")
      : {}),
  };
  for (const [k, v] of Object.entries(o.headers ?? {})) headers[k.toLowerCase()] = v;
  const apiKey = o.apiKey ?? envValue("TRACEPIPE_API_KEY", env);
  if (apiKey) headers["x-api-key"] = apiKey;
  const project = o.project ?? envValue("TRACEPIPE_PROJECT", env);
  if (project) headers[PROJECT_HEADER] = project;
  return { url, headers };
}

class RateLimitedOtlpTraceExporter extends OTLPTraceExporter {
  constructor(
    config: ConstructorParameters<typeof OTLPTraceExporter>[0],
    private readonly gate: () => Promise<void>,
  ) {
    super(config);
  }

  override export(items: Parameters<OTLPTraceExporter["export"]>[0], resultCallback: (result: ExportOutcome) => void): void {
    this.gate().then(
      () => super.export(items, resultCallback),
      (error: unknown) => resultCallback({ code: 1, error: error instanceof Error ? error : new Error(String(error)) }),
    );
  }
}

/** An OTLPTraceExporter; typed by its shape, so that either SDK line's span processors take it. */
export function createOtlpTraceExporter(o: OtlpTraceExporterOptions = {}): SpanExporterShape {
  const { url, headers } = resolveOtlpTarget(o);
  const m = matchLimit({ method: "POST", path: "/otel/v1/traces", headers, ip: "self" });
  const limit = o.rateLimit?.limit ?? m?.limit ?? 2000;
  const windowMs = o.rateLimit?.windowMs ?? m?.windowMs ?? 10_000;
  const window = arrivalWindowMs(windowMs);
  const limiter = o.limiter ?? new MemoryRateLimiter();
  const key = m?.key ?? "otel-traces";
  const exporter: SpanExporterShape = new RateLimitedOtlpTraceExporter({ url, headers, timeoutMillis: o.timeoutMillis }, () =>
    limiter.acquire(key, 1, limit, window),
  );
  return exporter;
}
