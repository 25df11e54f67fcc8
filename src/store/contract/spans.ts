/**
 * OTLP span staging: spans stored as they came, by (trace id, span id), until
 * their trace is converted to runs; and the traces still waiting for a root.
 * A trace with a root is converted at once by the caller; a trace without one
 * waits until no span of it has come for a quiet time (the rootless sweep).
 */

/**
 * One span as the collector stages it: ids as hex, times as ISO strings, and
 * the structured members as JSON text (resource, scope, attributes, events,
 * links, status), kept exactly as decoded.
 */
export interface SpanInput {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  /** 1: the exporter flagged the parent as remote (another process); 0: local; null: not said. */
  parent_remote?: 0 | 1 | null;
  name: string;
  kind: number;
  start_time: string;
  end_time: string;
  resource: string;
  scope: string;
  attributes: string;
  events: string;
  links: string;
  status: string;
}

/** A staged span, with when it was stored. */
export interface StoredSpan extends SpanInput {
  parent_remote: 0 | 1 | null;
  received_at: string;
}

export interface SpanStore {
  /**
   * Store spans (a span already stored is replaced) and resolve to the traces
   * among them that now have a root (see hasRootSpan), in the order they first
   * appear: the ones to convert. The others wait, marked with this time as
   * their newest span's.
   */
  storeSpans(spans: readonly SpanInput[]): Promise<string[]>;
  /** Every stored span of one trace, by start time. */
  spansOfTrace(traceId: string): Promise<StoredSpan[]>;
  /**
   * Whether a root of the trace has arrived: its root span (no parent), or
   * the root of one process's part of it (a span whose parent the exporter
   * flagged as remote).
   */
  hasRootSpan(traceId: string): Promise<boolean>;
  /**
   * Traces still without a root whose newest span was stored at or before
   * `quietSince` (an ISO time), oldest first, at most `limit` of them.
   */
  quietRootlessTraces(quietSince: string, limit: number): Promise<string[]>;
  /**
   * The trace no longer waits for a root (it was converted as it is), unless
   * a span of it came after `quietSince`: then it waits on, to be converted
   * again with that span.
   */
  forgetRootless(traceId: string, quietSince: string): Promise<void>;
  /**
   * Runs `convert` (one conversion of the trace: its reads and its ingest)
   * serialized with every other conversion of the trace and every
   * storeSpans / storeLogs naming it, across all the collectors sharing the
   * store: the last conversion ingested read everything stored before it.
   */
  convertingTrace<T>(traceId: string, convert: () => Promise<T>): Promise<T>;
  /**
   * The rootless sweep's claim on one trace: when the trace still waits for a
   * root, no span of it came after `quietSince` and no other conversion holds
   * it, `convert` runs and the trace stops waiting, both or neither (a
   * collector that dies meanwhile leaves it waiting for the next sweep).
   * `convert` failing for a reason of its own (not the database's) is
   * returned as `error` and the trace is forgotten all the same, so a trace
   * that cannot convert is not tried forever. Resolves `claimed: false` when
   * there was nothing to do or another collector holds the trace.
   */
  sweepRootless(traceId: string, quietSince: string, convert: () => Promise<void>): Promise<{ claimed: boolean; error?: unknown }>;
}
