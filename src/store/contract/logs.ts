/**
 * OTLP log staging: log records stored as they came, by trace and span id,
 * beside the staged spans (spans.ts). The GenAI instrumentations send a
 * call's messages as log records; the collector joins them to the span's
 * run whichever arrives first, converting the trace again (stable run ids
 * make that an upsert). Records of no span, or of a span that made no LLM
 * run, are kept too.
 */

/**
 * One log record as the collector stages it: ids as hex (empty when the
 * record belongs to no trace or span), the time as an ISO string, body,
 * attributes, resource and scope as JSON text.
 */
export interface LogInput {
  trace_id: string;
  span_id: string;
  /** Its identity within the span (a hash of what it says): a record sent again replaces itself. */
  record_key: string;
  /** Its position in its request: the order of records with the same time. */
  seq: number;
  time: string;
  event_name: string;
  severity: number;
  body: string;
  attributes: string;
  resource: string;
  scope: string;
}

/** A staged record, with when it was stored. */
export interface StoredLog extends LogInput {
  received_at: string;
}

export interface LogStore {
  /**
   * Store log records (a record already stored, same trace, span and key, is
   * replaced) and resolve to the traces among them that have a root span
   * stored: the ones to convert again now. A trace with spans but no root
   * waits on (its quiet time starts again); one with no spans yet is
   * converted when its root span comes.
   */
  storeLogs(logs: readonly LogInput[]): Promise<string[]>;
  /** Every stored record of one trace, by time, then by position in its request. */
  logsOfTrace(traceId: string): Promise<StoredLog[]>;
}
