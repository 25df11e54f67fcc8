/**
 * The collector's limits, in one place with their defaults (docs/collector-api.md
 * "Limits"). Every one is an option of createCollector; the batch bounds are
 * also advertised in GET /info, and enforced as advertised.
 */
export interface CollectorLimits {
  /** Largest request body, raw or decompressed (413 past it). */
  maxBodyBytes: number;
  /** Most runs (posts plus patches) in one batch or multipart request (413 past it; the client splits). */
  batchSizeLimit: number;
  /** Largest body of a request carrying more than one run (413 past it; one run alone may use maxBodyBytes). */
  batchSizeBytesLimit: number;
  /** Deepest nesting of objects and arrays in any JSON document received (a body or a multipart part); 422 past it. */
  maxJsonDepth: number;
  /** Problems listed in a 422; the rest are counted (`issue_count`). */
  maxListedIssues: number;
  /** Checking a request stops after this many problems (`issue_count_complete: false`). */
  maxCountedIssues: number;
  /** Most parts in one multipart request (413 past it). */
  maxMultipartParts: number;
  /** A body past this many decoded bytes is "large" and needs one of the large-body slots. */
  largeBodyBytes: number;
  /** Large bodies read at once; later ones wait (their sockets are paused) until a slot frees. */
  maxConcurrentLargeBodies: number;
  /**
   * Bytes of large bodies held at once (declared lengths, or decoded bytes so
   * far): a large body waits while the others' bytes leave no room for its own
   * (one alone always runs). Parsing and storing a body costs a few times its
   * size, so this is what bounds the collector's memory under concurrent uploads.
   */
  largeBodyBudgetBytes: number;
  /**
   * Requests handled at once (GET /info aside); past it 503 with Retry-After,
   * never a queue. With largeBodyBytes it bounds what small bodies hold, as
   * largeBodyBudgetBytes bounds the large ones. 0: no bound.
   */
  maxInFlight: number;
}

export interface CollectorTimeouts {
  /** Time to receive a request's headers, from the first byte (408 then close). */
  headersMs: number;
  /** Time to receive a whole request, headers and body (408 then close). */
  requestMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveMs: number;
  /** A connection with no traffic at all (e.g. opened and never used, or a stalled body) is closed after this long. */
  idleSocketMs: number;
  /** On close, requests under way are answered for up to this long; then their connections are cut. */
  drainMs: number;
}

export const DEFAULT_LIMITS: CollectorLimits = {
  maxBodyBytes: 64 * 1024 * 1024,
  batchSizeLimit: 1000,
  batchSizeBytesLimit: 20 * 1024 * 1024,
  maxJsonDepth: 512,
  maxListedIssues: 100,
  maxCountedIssues: 10_000,
  maxMultipartParts: 10_000,
  largeBodyBytes: 1024 * 1024,
  maxConcurrentLargeBodies: 4,
  largeBodyBudgetBytes: 96 * 1024 * 1024,
  maxInFlight: 128,
};

export const DEFAULT_TIMEOUTS: CollectorTimeouts = {
  headersMs: 20_000,
  requestMs: 120_000,
  keepAliveMs: 5_000,
  idleSocketMs: 30_000,
  drainMs: 10_000,
};

/** The options that bound requests, as createCollector takes them (the three top-level ones predate `limits`). */
export interface LimitOptions {
  maxBodyBytes?: number;
  batchSizeLimit?: number;
  batchSizeBytesLimit?: number;
  limits?: Partial<CollectorLimits>;
}

/** The defaults overridden by every option given (an explicit undefined keeps the default). */
export function collectorLimits(o: LimitOptions): CollectorLimits {
  return {
    ...DEFAULT_LIMITS,
    ...defined({ maxBodyBytes: o.maxBodyBytes, batchSizeLimit: o.batchSizeLimit, batchSizeBytesLimit: o.batchSizeBytesLimit }),
    ...defined(o.limits ?? {}),
  };
}

export function collectorTimeouts(t: Partial<CollectorTimeouts> = {}): CollectorTimeouts {
  return { ...DEFAULT_TIMEOUTS, ...defined(t) };
}

/** The entries of `o` whose value is not undefined. */
function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
