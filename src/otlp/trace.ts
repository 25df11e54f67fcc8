/**
 * A stored OTLP trace to runs. The collector stores spans as they came
 * (attributes intact) and log records by trace and span id; once a root of
 * the trace has arrived (roots end last, so the rest of a process's trace is
 * in by then), the whole stored trace, with its log records, is converted and
 * ingested. A root is the trace's root span, or a span whose parent the
 * exporter flagged as remote: the first span of a service called by another,
 * whose caller may export elsewhere or not at all; the span processor takes
 * such a span as a root too.
 *
 * Run ids are stable functions of the spans, so whatever arrives after the
 * root (a late span, log records sent after their spans) converts the trace
 * again and upserts the same runs: the conversion is patched over what is
 * stored, the newest whole reading wins. A trace whose root never comes is
 * converted by the rootless sweep (sweep.ts).
 */
import type { LogRecordLike } from "../../adapters/spans.js";
import type { LogStore, RunStore, SpanStore } from "../store/index.js";
import { traceToRuns } from "./convert.js";
import type { PlainLog } from "./logs.js";
import { isLocalRoot, type PlainSpan } from "./plain.js";
import { parseJson, plainToLogRecord, plainToSpanRecord } from "./records.js";

/** What converting a stored trace needs of the store. */
export type OtlpStore = Pick<SpanStore, "spansOfTrace" | "quietRootlessTraces" | "convertingTrace" | "sweepRootless"> &
  Pick<LogStore, "logsOfTrace"> &
  Pick<RunStore, "ingest">;

/** Default quiet time before a trace without a root is converted as it is: a few of BatchSpanProcessor's 5 s export intervals. */
export const DEFAULT_ROOTLESS_AFTER_MS = 30_000;

/**
 * Convert a stored trace and ingest its runs; `project` (the request's) wins over the one its spans carry.
 * Serialized per trace in the store (collectors sharing one store included), so a conversion that read
 * less of the trace never lands after one that read more.
 */
export function convertTrace(store: OtlpStore, traceId: string, project?: string): Promise<void> {
  return store.convertingTrace(traceId, () => convertHeld(store, traceId, project));
}

/** convertTrace's work, for a caller that already holds the trace (the rootless sweep's claim). */
export async function convertHeld(store: OtlpStore, traceId: string, project?: string): Promise<void> {
  const rows: PlainSpan[] = await store.spansOfTrace(traceId);
  const logRows: PlainLog[] = await store.logsOfTrace(traceId);
  const root = rows.find((r) => !r.parent_span_id) ?? rows.find(isLocalRoot) ?? rows[0];
  const traceProject = project ?? parseJson<Record<string, unknown>>(root?.resource, {})["tracepipe.project"];
  const bySpan = new Map<string, LogRecordLike[]>();
  for (const l of logRows) {
    let list = bySpan.get(l.span_id);
    if (!list) bySpan.set(l.span_id, (list = []));
    list.push(plainToLogRecord(l));
  }
  const spans = rows.map((r) => {
    const s = plainToSpanRecord(r);
    const logs = bySpan.get(s.spanId);
    if (logs) {
      s.logs = logs;
      bySpan.delete(s.spanId);
    }
    return s;
  });
  const strayLogs = [...bySpan].flatMap(([spanId, list]) => list.map((r) => ({ ...r, spanId })));
  const runs = traceToRuns(spans, { project: typeof traceProject === "string" ? traceProject : undefined, strayLogs });
  if (!runs.length) return;
  // A post only fills what a stored run lacks; a later conversion knows more (its root came late, a kept
  // span between it and its parent came late, its log records came), so the whole reading is patched: the newest wins.
  const patch = runs.map((r) => {
    const p: Record<string, unknown> = {
      id: r.id,
      trace_id: r.trace_id,
      dotted_order: r.dotted_order,
      inputs: r.inputs,
      extra: r.extra,
      events: r.events,
    };
    if (r.parent_run_id) p.parent_run_id = r.parent_run_id;
    if (r.outputs) p.outputs = r.outputs;
    return p;
  });
  await store.ingest({ post: runs, patch: patch as never });
}
