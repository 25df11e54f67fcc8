/**
 * Weekly partitions of `runs` (by trace start, Monday to Monday UTC), made
 * ahead of time: at start-up and every few hours, the previous week and the
 * next few exist. A run outside them (a backfill of old logs, a trace start
 * far ahead) lands in the default partition, which retention prunes row by
 * row. Making a partition needs a brief exclusive lock on `runs`; it waits at
 * most LOCK_WAIT for it and otherwise tries again at the next upkeep, so
 * upkeep never holds up ingest. One collector does it at a time (advisory
 * lock); the others skip.
 */
import type pg from "pg";
import { SCHEMA_LOCK } from "./migrations.js";

const DAY_MS = 86_400_000;
export const PARTITION_DAYS = 7;
const LOCK_WAIT = "500ms";

/** Monday 00:00 UTC of the week holding `t`. */
export function weekStart(t: Date): Date {
  const day = Math.floor(t.getTime() / DAY_MS);
  // 1970-01-01 was a Thursday: day 4 (1970-01-05) was a Monday.
  return new Date((day - ((((day - 4) % 7) + 7) % 7)) * DAY_MS);
}

export function partitionName(start: Date): string {
  return `runs_p${start.toISOString().slice(0, 10).replaceAll("-", "")}`;
}

/** The week a partition holds, from its name (undefined for the default partition or a stranger). */
export function partitionRange(name: string): { from: Date; to: Date } | undefined {
  const m = /^runs_p(\d{4})(\d{2})(\d{2})$/.exec(name);
  if (!m) return undefined;
  const from = new Date(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`);
  return { from, to: new Date(from.getTime() + PARTITION_DAYS * DAY_MS) };
}

/** Make the partitions from a week before `now` to `ahead` weeks after it that do not exist yet. Resolves to those made. */
export async function ensurePartitions(client: pg.ClientBase, now: Date, ahead = 4): Promise<string[]> {
  const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS ok", [SCHEMA_LOCK]);
  if (!got.rows[0]?.ok) return [];
  const made: string[] = [];
  try {
    const existing = new Set(
      (
        await client.query<{ name: string }>(
          "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'runs'::regclass",
        )
      ).rows.map((r) => r.name),
    );
    const first = weekStart(now).getTime() - PARTITION_DAYS * DAY_MS;
    for (let w = 0; w <= ahead + 1; w++) {
      const from = new Date(first + w * PARTITION_DAYS * DAY_MS);
      const name = partitionName(from);
      if (existing.has(name)) continue;
      const to = new Date(from.getTime() + PARTITION_DAYS * DAY_MS);
      await client.query("BEGIN");
      try {
        await client.query(`SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
        await client.query(`CREATE TABLE ${name} PARTITION OF runs FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`);
        await client.query("COMMIT");
        made.push(name);
      } catch (err) {
        await client.query("ROLLBACK");
        const code = (err as { code?: string }).code;
        // 55P03: the lock was not free in time; 23514: the default partition already holds runs of that week (they stay there).
        if (code !== "55P03" && code !== "23514") throw err;
      }
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1::bigint)", [SCHEMA_LOCK]);
  }
  return made;
}
