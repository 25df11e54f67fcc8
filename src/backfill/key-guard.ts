/**
 * A key revoked in the middle of a backfill. The start-of-run probe
 * (access.ts) catches a key that was never good; this catches one that stops
 * working after some batches were accepted. For the client a 401/403 is a
 * refusal for good, so every later batch would become a dead letter; for a
 * backfill it is a configuration error: stop, keep nothing as a dead letter,
 * and leave the checkpoint where every record before it was acknowledged, so
 * the same command with a good key resumes.
 *
 * KeyGuardSink wraps the HTTP sink. On the first 401/403 it remembers the
 * refusal and calls `onRefused` (the CLI stops reading and shuts the client
 * down, which puts whatever is unsent in the spool); that batch and every
 * later one fail as "retry" (never "fatal", so none is dead-lettered) until
 * the client gives up on them.
 */
import { ConfigError } from "../errors.js";
import type { Op } from "../ingest/ops.js";
import { SinkError, type Sink, type SinkLimits } from "../ingest/sink.js";

export function isKeyRefusal(err: unknown): err is SinkError {
  return err instanceof SinkError && (err.status === 401 || err.status === 403);
}

export class KeyGuardSink implements Sink {
  /** The first 401/403, once one came. */
  refusal?: SinkError;

  constructor(
    private readonly inner: Sink,
    private readonly onRefused: (err: SinkError) => void,
  ) {}

  get target(): string {
    return this.inner.target;
  }

  get encodesRuns(): boolean {
    return this.inner.encodesRuns === true;
  }

  limits(): Promise<SinkLimits> {
    return this.inner.limits();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  async send(ops: Op[], signal?: AbortSignal): Promise<void> {
    if (this.refusal) throw this.held();
    try {
      await this.inner.send(ops, signal);
    } catch (err) {
      if (!isKeyRefusal(err)) throw err;
      if (!this.refusal) {
        this.refusal = err;
        this.onRefused(err);
      }
      throw this.held();
    }
  }

  private held(): SinkError {
    return new SinkError(
      `${this.inner.target} refused the API key (${this.refusal!.message}); the batch is kept for a rerun`,
      "retry",
      this.refusal!.status,
    );
  }
}

/** The refusal as the configuration error the CLI reports (exit 2), saying what was kept and how to resume. */
export function keyRevokedError(endpoint: string, refusal: SinkError, resume: string): ConfigError {
  return new ConfigError([
    {
      loc: ["api_key"],
      msg: `${endpoint}: the API key stopped being accepted during the backfill (HTTP ${refusal.status}: ${refusal.message}). Stopped; nothing was dead-lettered. ${resume}`,
      type: refusal.status === 401 ? "unauthorized" : "forbidden",
    },
  ]);
}
