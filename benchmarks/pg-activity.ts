/**
 * What the collectors' PostgreSQL backends do during a benchmark, seen from
 * the server: wait events sampled from pg_stat_activity (on the CPU, waiting
 * for the collector, for a lock, ...), and with pg_stat_statements loaded
 * (shared_preload_libraries) the statements per request and the costliest
 * ones. Its own connection's backend is reported in `pids` so its CPU is not
 * charged to the collectors.
 */
import pg from "pg";

/** Samples per state: `CPU` (active, no wait event), else `<wait_event_type>:<wait_event>`; idle backends are `idle`. */
export type WaitCounts = Record<string, number>;

export interface WaitSampler {
  pids: Set<number>;
  /** Stop sampling; the wait counts and the statements report (per `requests` requests). */
  stop(requests: number): Promise<{ waits?: WaitCounts; statements?: string }>;
}

const SAMPLE_MS = 20;

export async function startWaitSampler(url: string, what: { waits: boolean; statements: boolean }): Promise<WaitSampler> {
  const c = new pg.Client({ connectionString: url, application_name: "bench-sampler" });
  await c.connect();
  const pid = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  if (what.statements) {
    await c.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await c.query("SELECT pg_stat_statements_reset()");
  }
  const waits: WaitCounts = {};
  let stopped = false;
  const sampling = (async () => {
    while (what.waits && !stopped) {
      const rows = (
        await c.query<{ state: string | null; t: string | null; e: string | null }>(
          "SELECT state, wait_event_type AS t, wait_event AS e FROM pg_stat_activity WHERE application_name = 'tracepipe'",
        )
      ).rows;
      for (const r of rows) {
        const k = r.state === "idle" ? "idle" : r.t ? `${r.state === "idle in transaction" ? "in-tx " : ""}${r.t}:${r.e}` : "CPU";
        waits[k] = (waits[k] ?? 0) + 1;
      }
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
  })();
  return {
    pids: new Set([pid]),
    async stop(requests) {
      stopped = true;
      await sampling;
      let statements: string | undefined;
      if (what.statements) {
        const rows = (
          await c.query<{ query: string; calls: string; ms: number; plan: number }>(
            `SELECT query, calls, total_exec_time + total_plan_time AS ms, total_plan_time AS plan FROM pg_stat_statements
             WHERE query NOT LIKE '%pg_stat%' AND query NOT LIKE '%pg_backend_pid%' AND query <> 'SELECT count(*) AS n FROM runs' ORDER BY ms DESC`,
          )
        ).rows;
        const calls = rows.reduce((n, r) => n + Number(r.calls), 0);
        const ms = rows.reduce((n, r) => n + r.ms, 0);
        statements =
          `  statements per request ${(calls / requests).toFixed(2)}, their time ${((ms / requests) * 1000).toFixed(0)} µs per request; costliest:\n` +
          rows
            .slice(0, 6)
            .map(
              (r) =>
                `    ${((r.ms / requests) * 1000).toFixed(0)} µs/req (planning ${((r.plan / requests) * 1000).toFixed(0)})  ${(Number(r.calls) / requests).toFixed(2)} calls/req  ${r.query.replace(/\s+/g, " ").slice(0, 110)}`,
            )
            .join("\n");
      }
      await c.end();
      return { waits: what.waits ? waits : undefined, statements };
    },
  };
}
