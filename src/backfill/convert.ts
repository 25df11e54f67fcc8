/**
 * One historical LLM call (a request, a response, or both, with whatever
 * times and metadata the log kept) becomes one `llm` Run record, through the
 * same adapters the wrappers use. Anything that cannot become a valid run
 * throws a ValidationError/NormalizeError naming the field, and the caller
 * dead-letters the line.
 */
import { getAdapter } from "../../adapters/index.js";
import type { RequestResult, ResponseResult } from "../../adapters/types.js";
import { ValidationError, type Issue } from "../errors.js";
import { validate } from "../format/validate.js";
import type { Message } from "../format/schema.js";
import { detectFormat } from "../normalize.js";
import { dottedSegment, isoMicros } from "../run/ids.js";
import type { Run, RunEvent } from "../run/schema.js";
import { estimateUsage } from "../tokens/index.js";
import { deterministicUuid } from "./identity.js";

export interface CallRecord {
  /** Stable key of the record within its file: `custom_id:<id>` or `line:<n>`. */
  key: string;
  request?: unknown;
  /** A response body, or an array of stream chunks/events. */
  response?: unknown;
  /** Vendor adapter name, or undefined to detect it. */
  format?: string;
  /** The call failed: the vendor's error, as text. */
  error?: string;
  startMs?: number;
  endMs?: number;
  /** When the first token arrived (epoch ms). */
  firstTokenMs?: number;
  name?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  /** An id the log carried; used as is when it is a UUID. */
  id?: string;
}

export interface ConvertContext {
  fingerprint: string;
  file: string;
  line: number;
  project?: string;
  /** Time for records that carry none (the file's mtime), epoch ms. */
  fallbackMs: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NAMES: Record<string, string> = { openai: "ChatOpenAI", anthropic: "ChatAnthropic" };

/** Epoch milliseconds from an ISO string, epoch seconds or epoch milliseconds. */
export function toEpochMs(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v) && v > 0) return v < 1e11 ? v * 1000 : v; // seconds before ~5138 AD read as seconds
  if (typeof v === "string" && v.trim()) {
    const n = Number(v);
    if (Number.isFinite(n) && /^\d+(\.\d+)?$/.test(v.trim())) return toEpochMs(n);
    const ms = Date.parse(v);
    if (!Number.isNaN(ms)) return ms;
  }
  return undefined;
}

function prefixed(issues: Issue[], prefix: (string | number)[]): Issue[] {
  return issues.map((i) => ({ ...i, loc: [...prefix, ...i.loc] }));
}

function wrapErr(err: unknown, prefix: (string | number)[]): never {
  if (err instanceof ValidationError) throw new ValidationError(prefixed(err.issues, prefix));
  throw err;
}

export function callToRun(rec: CallRecord, ctx: ConvertContext): Run {
  if (rec.request === undefined && rec.response === undefined && rec.error === undefined) {
    throw new ValidationError([{ loc: [], msg: "the record has neither a request nor a response", type: "missing" }]);
  }
  const probe = rec.request !== undefined && rec.response !== undefined ? { request: rec.request, response: rec.response } : (rec.request ?? rec.response);
  let format = rec.format;
  if (!format && probe !== undefined) {
    try {
      format = detectFormat(probe);
    } catch (err) {
      wrapErr(err, []);
    }
  }
  const adapter = format ? getAdapter(format) : undefined;
  if (format && !adapter) throw new ValidationError([{ loc: ["format"], msg: `unknown format ${JSON.stringify(format)}`, type: "unknown_format" }]);

  let req: RequestResult | undefined;
  let res: ResponseResult | undefined;
  try {
    if (adapter && rec.request !== undefined) req = adapter.normalizeRequest(rec.request);
  } catch (err) {
    wrapErr(err, ["request"]);
  }
  try {
    if (adapter && rec.response !== undefined) res = Array.isArray(rec.response) ? adapter.normalizeStream(rec.response) : adapter.normalizeResponse(rec.response);
  } catch (err) {
    wrapErr(err, ["response"]);
  }
  const inputs: Message[] = req?.messages ?? [];
  const outputs: Message[] = res?.messages ?? [];
  const problems = validate([...inputs, ...outputs]);
  if (problems.length) throw new ValidationError(prefixed(problems, ["messages"]));

  const provider = res?.trace_provider ?? req?.trace_provider;
  const model = res?.trace_model_name ?? req?.trace_model_name;
  if (outputs[0] && !outputs[0].usage_metadata) {
    outputs[0].usage_metadata = estimateUsage({ model, provider, inputs, outputs });
  }

  const startMs = rec.startMs ?? rec.endMs ?? ctx.fallbackMs;
  const endMs = Math.max(rec.endMs ?? startMs, startMs);
  const startUs = Math.round(startMs * 1000);
  const id = rec.id && UUID.test(rec.id) ? rec.id.toLowerCase() : deterministicUuid([ctx.fingerprint, rec.id ? `id:${rec.id}` : rec.key], rec.startMs ?? rec.endMs);
  const events: RunEvent[] = [];
  if (rec.firstTokenMs !== undefined && rec.firstTokenMs >= startMs) events.push({ name: "new_token", time: isoMicros(Math.round(rec.firstTokenMs * 1000)) });
  const metadata: Record<string, unknown> = { ...rec.metadata };
  if (provider) metadata.trace_provider = provider;
  if (model) metadata.trace_model_name = model;
  if (req && Object.keys(req.invocation_params).length) metadata.invocation_params = req.invocation_params;
  metadata.backfill = { file: ctx.file, line: ctx.line, key: rec.key };
  const run: Run = {
    id,
    trace_id: id,
    dotted_order: dottedSegment(startUs, id),
    name: rec.name ?? (provider && NAMES[provider]) ?? "llm",
    run_type: "llm",
    start_time: isoMicros(startUs),
    end_time: isoMicros(Math.round(endMs * 1000)),
    inputs: { messages: inputs },
    events,
    tags: rec.tags ?? [],
    extra: { metadata },
  };
  if (res) run.outputs = { messages: outputs };
  if (rec.error !== undefined) run.error = rec.error;
  if (ctx.project) run.session_name = ctx.project;
  return run;
}
