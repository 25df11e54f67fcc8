/**
 * OTLP span staging in PostgreSQL (the SpanStore half of PostgresStore): spans
 * by (trace id, span id), replaced when sent again, and `otel_rootless`, the
 * traces still waiting for a root with the time their newest span came.
 */
import type { SpanInput, StoredSpan } from "../contract/spans.js";
import type pg from "pg";
import { StoreUnavailableError } from "../../errors.js";
import type { PgPool } from "./pool.js";
import { storable } from "./columns.js";

/** A span's column as PostgreSQL text can hold it (a name sent with U+0000 in it would fail the whole export). */
const storableValue = (v: unknown): unknown => (typeof v === "string" ? storable(v) : v);

const SPAN_COLUMNS = [
  "trace_id",
  "span_id",
  "parent_span_id",
  "parent_remote",
  "name",
  "kind",
  "start_time",
  "end_time",
  "resource",
  "scope",
  "attributes",
  "events",
  "links",
  "status",
  "received_at",
] as const;
const SPAN_TYPES: Record<string, string> = { parent_remote: "smallint", kind: "integer" };

/** A root of the trace: its root span (no parent), or a span whose parent the exporter flagged as remote. */
export const ROOT_SPAN = "(parent_span_id IS NULL OR parent_span_id = '' OR parent_remote = 1)";

/**
 * First key of the per-trace advisory locks (the second is hashtext(trace id)): a trace's
 * conversion, and the staging of its spans and log records, hold it to the end of their
 * transaction. Two traces whose ids hash alike only wait for each other.
 */
const TRACE_LOCK = 0x74726163; // "trac"

/** Take the traces' locks to the end of the transaction, in hash order so two stagings never wait on each other in a circle. */
export async function lockTraces(c: pg.PoolClient, traceIds: readonly string[]): Promise<void> {
  if (traceIds.length === 0) return;
  await c.query(
    `SELECT count(pg_advisory_xact_lock(${TRACE_LOCK}, h)) FROM (SELECT DISTINCT hashtext(t) AS h FROM unnest($1::text[]) t ORDER BY h) s`,
    [traceIds],
  );
}

/** Errors of the database itself (away, a lost race), which the sweep's transaction must not swallow. */
function isDatabaseFailure(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return true;
  const code = (err as { code?: unknown })?.code;
  return typeof code === "string" && /^(08|40|53|57|XX)/.test(code);
}

export class SpanStaging {
  constructor(private readonly pool: PgPool) {}

  async storeSpans(spans: readonly SpanInput[]): Promise<string[]> {
    if (spans.length === 0) return [];
    const now = new Date().toISOString();
    // One row per (trace, span): the last of a request's duplicates wins, as a replace would.
    const unique = [...new Map(spans.map((s) => [`${s.trace_id}/${s.span_id}`, s])).values()];
    return this.pool.transaction(async (c) => {
      // Another collector staging or converting one of these traces: the root check below must see its spans.
      await lockTraces(
        c,
        unique.map((s) => s.trace_id),
      );
      await c.query(
        `INSERT INTO otel_spans (${SPAN_COLUMNS.join(", ")}) SELECT * FROM unnest(${SPAN_COLUMNS.map((col, i) => `$${i + 1}::${SPAN_TYPES[col] ?? "text"}[]`).join(", ")})
         ON CONFLICT (trace_id, span_id) DO UPDATE SET ${SPAN_COLUMNS.filter((col) => col !== "trace_id" && col !== "span_id")
           .map((col) => `${col} = excluded.${col}`)
           .join(", ")}`,
        SPAN_COLUMNS.map((col) =>
          unique.map((s) =>
            col === "received_at"
              ? now
              : col === "parent_remote"
                ? (s.parent_remote ?? null)
                : storableValue((s as unknown as Record<string, unknown>)[col]),
          ),
        ),
      );
      const traces = [...new Set(unique.map((s) => s.trace_id))].sort();
      const rooted = (
        await c.query<{ trace_id: string }>(`SELECT DISTINCT trace_id FROM otel_spans WHERE trace_id = ANY($1::text[]) AND ${ROOT_SPAN}`, [
          traces,
        ])
      ).rows.map((r) => r.trace_id);
      const rootedSet = new Set(rooted);
      const waiting = traces.filter((t) => !rootedSet.has(t));
      if (rooted.length) await c.query("DELETE FROM otel_rootless WHERE trace_id = ANY($1::text[])", [rooted]);
      if (waiting.length) {
        await c.query(
          "INSERT INTO otel_rootless (trace_id, last_received_at) SELECT unnest($1::text[]), $2 ON CONFLICT (trace_id) DO UPDATE SET last_received_at = excluded.last_received_at",
          [waiting, now],
        );
      }
      // In the order the request named them.
      return [...new Set(unique.map((s) => s.trace_id))].filter((t) => rootedSet.has(t));
    });
  }

  async spansOfTrace(traceId: string): Promise<StoredSpan[]> {
    return (
      await this.pool.query<StoredSpan>(
        `SELECT ${SPAN_COLUMNS.join(", ")} FROM otel_spans WHERE trace_id = $1 ORDER BY start_time, span_id`,
        [traceId],
      )
    ).rows;
  }

  async hasRootSpan(traceId: string): Promise<boolean> {
    return (await this.pool.query(`SELECT 1 FROM otel_spans WHERE trace_id = $1 AND ${ROOT_SPAN} LIMIT 1`, [traceId])).rowCount! > 0;
  }

  async quietRootlessTraces(quietSince: string, limit: number): Promise<string[]> {
    const r = await this.pool.query<{ trace_id: string }>(
      "SELECT trace_id FROM otel_rootless WHERE last_received_at <= $1 ORDER BY last_received_at, trace_id LIMIT $2",
      [quietSince, limit],
    );
    return r.rows.map((x) => x.trace_id);
  }

  async forgetRootless(traceId: string, quietSince: string): Promise<void> {
    await this.pool.query("DELETE FROM otel_rootless WHERE trace_id = $1 AND last_received_at <= $2", [traceId, quietSince]);
  }

  convertingTrace<T>(traceId: string, convert: () => Promise<T>): Promise<T> {
    return this.pool.transaction(async (c) => {
      await c.query(`SELECT pg_advisory_xact_lock(${TRACE_LOCK}, hashtext($1))`, [traceId]);
      return convert();
    });
  }

  sweepRootless(traceId: string, quietSince: string, convert: () => Promise<void>): Promise<{ claimed: boolean; error?: unknown }> {
    return this.pool.transaction(async (c) => {
      // Held by a conversion or a staging of the trace: it is not quiet, or another sweep has it.
      const lock = await c.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(${TRACE_LOCK}, hashtext($1)) AS ok`, [traceId]);
      if (!lock.rows[0]?.ok) return { claimed: false };
      const gone = await c.query("DELETE FROM otel_rootless WHERE trace_id = $1 AND last_received_at <= $2", [traceId, quietSince]);
      if (!gone.rowCount) return { claimed: false };
      await c.query("SAVEPOINT sweep_convert");
      try {
        await convert();
        return { claimed: true };
      } catch (error) {
        if (isDatabaseFailure(error)) throw error;
        // What the failed conversion wrote is undone; the trace stops waiting all the same.
        await c.query("ROLLBACK TO SAVEPOINT sweep_convert");
        return { claimed: true, error };
      }
    });
  }
}
