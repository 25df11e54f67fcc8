/**
 * One OTLP export request received (HTTP or gRPC): decoded, stored, and the
 * traces it completes converted. Spans and log records are stored by trace
 * and span id; a trace is converted when its root is in, and again whenever
 * more of it (spans or log records) arrives after that, so logs sent before
 * or after their spans join the same runs (trace.ts).
 */
import { decodeDocument, type DecodeOptions, type Signal } from "./decode.js";
import { toPlainLogs } from "./logs.js";
import { toPlain } from "./plain.js";
import { convertTrace, type OtlpStore } from "./trace.js";
import type { LogStore, SpanStore } from "../store/index.js";

export interface ReceiveOptions extends DecodeOptions {
  /** The project the exporter names (createOtlpTraceExporter's `project`): it wins over the spans' resource. */
  project?: string;
}

/** The store as OTLP receiving needs it: span staging, log staging and ingest. */
export type OtlpReceiveStore = OtlpStore & Pick<SpanStore, "storeSpans"> & Pick<LogStore, "storeLogs">;

/** The answer, OTLP's Export*ServiceResponse in its JSON form. */
export async function receiveOtlp(
  store: OtlpReceiveStore,
  signal: Signal,
  body: Uint8Array,
  contentType: string,
  o: ReceiveOptions = {},
): Promise<{ partialSuccess: Record<string, never> }> {
  const doc = await decodeDocument(signal, body, contentType, o);
  await storeDocument(store, signal, doc, o.project);
  return { partialSuccess: {} };
}

/** A decoded request (OTLP JSON's object shape) stored and converted. */
export async function storeDocument(
  store: OtlpReceiveStore,
  signal: Signal,
  doc: Record<string, unknown>,
  project?: string,
): Promise<void> {
  if (signal === "traces") {
    const spans = toPlain(doc);
    if (project)
      for (const s of spans)
        s.resource = JSON.stringify({ ...(JSON.parse(s.resource) as Record<string, unknown>), "tracepipe.project": project });
    for (const traceId of await store.storeSpans(spans)) await convertTrace(store, traceId, project);
    return;
  }
  for (const traceId of await store.storeLogs(toPlainLogs(doc))) await convertTrace(store, traceId, project);
}
