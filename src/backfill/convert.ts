/**
 * One historical LLM call (a request, a response, or both, with whatever
 * times and metadata the log kept) becomes one `llm` Run record, through the
 * same adapters the wrappers use. Anything that cannot become a valid run
 * throws a ValidationError/NormalizeError naming the field, and the caller
 * dead-letters the line.
 */
import { isUuid } from "../run/ids.js";
import { ValidationError } from "../errors.js";
import { llmRun, readVendorCall } from "../run/llm.js";
import { isObj } from "../internal/obj.js";
import { dateTimeProblem, type Run } from "../run/schema.js";
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

/** Epoch milliseconds from an ISO string, epoch seconds or epoch milliseconds. */
export function toEpochMs(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v) && v > 0) return v < 1e11 ? v * 1000 : v; // seconds before ~5138 AD read as seconds
  if (typeof v === "string" && v.trim()) {
    const n = Number(v);
    if (Number.isFinite(n) && /^\d+(\.\d+)?$/.test(v.trim())) return toEpochMs(n);
    // The collector's rule (RFC 3339, real calendar dates): Date.parse alone would take 2025-02-30 as March 2.
    if (dateTimeProblem(v.trim()) !== undefined) return undefined;
    // No offset means UTC (as at the collector), never the machine's local time; +HHMM gets its colon.
    const t = v.trim().replace(" ", "T");
    const zoned = /[Zz]$/.test(t) ? t : /[+-]\d{2}:?\d{2}$/.test(t) ? t.replace(/([+-]\d{2}):?(\d{2})$/, "$1:$2") : `${t}Z`;
    const ms = Date.parse(zoned);
    if (!Number.isNaN(ms)) return ms;
  }
  return undefined;
}

export function callToRun(rec: CallRecord, ctx: ConvertContext): Run {
  if (rec.request === undefined && rec.response === undefined && rec.error === undefined) {
    throw new ValidationError([{ loc: [], msg: "the record has neither a request nor a response", type: "missing" }]);
  }
  const { call } = readVendorCall(rec);
  const startMs = rec.startMs ?? rec.endMs ?? ctx.fallbackMs;
  const endMs = Math.max(rec.endMs ?? startMs, startMs);
  if (rec.firstTokenMs !== undefined && rec.firstTokenMs >= startMs) call.firstTokenUs = Math.round(rec.firstTokenMs * 1000);
  const id = isUuid(rec.id)
    ? rec.id.toLowerCase()
    : deterministicUuid([ctx.fingerprint, rec.id ? `id:${rec.id}` : rec.key], rec.startMs ?? rec.endMs);
  // A logged call is checked before it is sent: an invalid one is dead-lettered with its reasons.
  const { run } = llmRun(
    call,
    {
      at: { id },
      name: rec.name,
      startUs: Math.round(startMs * 1000),
      endUs: Math.round(endMs * 1000),
      error: rec.error,
      tags: rec.tags,
      metadata: { ...rec.metadata, backfill: { file: ctx.file, line: ctx.line, key: rec.key } },
      project: ctx.project,
    },
    { validation: "reject", estimate: "now", rawInputs: isObj(rec.request) ? rec.request : undefined },
  );
  return run;
}
