/**
 * One OTLP export request received (HTTP or gRPC): decoded, stored, and the
 * traces it completes converted. Spans and log records are stored by trace
 * and span id; a trace is converted when its root is in, and again whenever
 * more of it (spans or log records) arrives after that, so logs sent before
 * or after their spans join the same runs (trace.ts).
 */
import { decodeDocument, type DecodeOptions, type Signal } from "./decode.js";
import { toPlainLogs } from "./logs.js";
import { toPlain, type Refusals } from "./plain.js";
import { convertTrace, type OtlpStore } from "./trace.js";
import type { LogStore, SpanStore } from "../store/index.js";

export interface ReceiveOptions extends DecodeOptions {
  /** The project the exporter names (createOtlpTraceExporter's `project`): it wins over the spans' resource. */
  project?: string;
}

/** The store as OTLP receiving needs it: span staging, log staging and ingest. */
export type OtlpReceiveStore = OtlpStore & Pick<SpanStore, "storeSpans"> & Pick<LogStore, "storeLogs">;

/**
 * OTLP's partial success: how many spans or log records of an export were refused (malformed), and why the
 * first was. Empty when all were taken.
 */
export interface PartialSuccess {
  rejectedSpans?: number;
  rejectedLogRecords?: number;
  errorMessage?: string;
}

/** The answer, OTLP's Export*ServiceResponse in its JSON form. */
export async function receiveOtlp(
  store: OtlpReceiveStore,
  signal: Signal,
  body: Uint8Array,
  contentType: string,
  o: ReceiveOptions = {},
): Promise<{ partialSuccess: PartialSuccess }> {
  const doc = await decodeDocument(signal, body, contentType, o);
  return { partialSuccess: await storeDocument(store, signal, doc, o.project) };
}

/**
 * A decoded request (OTLP JSON's object shape) stored and converted. A malformed span or log record is
 * refused alone and counted in the answer, the others stored; a request of nothing but malformed ones is
 * a ValidationError (the first refusal), as a request that could not be decoded is.
 */
export async function storeDocument(
  store: OtlpReceiveStore,
  signal: Signal,
  doc: Record<string, unknown>,
  project?: string,
): Promise<PartialSuccess> {
  const refusals: Refusals = { count: 0 };
  let traceIds: Iterable<string>;
  if (signal === "traces") {
    const spans = toPlain(doc, refusals);
    if (refusals.first && spans.length === 0) throw refusals.first;
    if (project)
      for (const s of spans)
        s.resource = JSON.stringify({ ...(JSON.parse(s.resource) as Record<string, unknown>), "tracepipe.project": project });
    traceIds = await store.storeSpans(spans);
  } else {
    const logs = toPlainLogs(doc, refusals);
    if (refusals.first && logs.length === 0) throw refusals.first;
    traceIds = await store.storeLogs(logs);
  }
  for (const traceId of traceIds) await convertTrace(store, traceId, project);
  if (!refusals.first) return {};
  const errorMessage = refusals.first.issues[0]?.msg ?? refusals.first.message;
  return signal === "traces" ? { rejectedSpans: refusals.count, errorMessage } : { rejectedLogRecords: refusals.count, errorMessage };
}
