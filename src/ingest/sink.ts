/**
 * Where batches go. The Client depends on this interface; HttpSink posts to
 * an ingest endpoint, EmbeddedSink writes the SQLite store directly.
 */
import { TracepipeError } from "../errors.js";
import type { Op } from "./ops.js";

export type FailureKind = "retry" | "split" | "fatal";

/** A failed send, classified so the client knows what to do with the batch. */
export class SinkError extends TracepipeError {
  override name = "SinkError";
  constructor(
    message: string,
    readonly kind: FailureKind,
    readonly status?: number,
    readonly detail?: unknown,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface SinkLimits {
  /** Most runs in one batch. */
  batchSize: number;
  /** Most bytes in one batch (approximate, before compression). */
  batchBytes: number;
}

export interface Sink {
  /** Deliver the batch or throw a SinkError saying whether to retry, split or give up. */
  send(ops: Op[], signal?: AbortSignal): Promise<void>;
  /** Batch bounds, possibly learned from the server (GET /info). */
  limits(): Promise<SinkLimits>;
  close(): Promise<void>;
  /** A short description for logs: the endpoint or the file. */
  readonly target: string;
  /**
   * send() needs no more of an op than what encodeMultipart writes of it, so
   * the client may hold a complete run encoded rather than as an object (see
   * encodedOp in ops.ts); reading `op.run` still works, at a parse's cost.
   */
  readonly encodesRuns?: boolean;
}
