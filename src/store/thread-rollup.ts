/**
 * The threads table, shared by both stores: per project and thread id (a
 * root run's session_id, thread_id or conversation_id), its turns and their
 * summed latency kept on ingest as deltas (old contribution out, new in), and
 * its first and last turn times found again, by the thread index, for every
 * thread a write touched. The threads list then reads one indexed page of it
 * instead of grouping the runs.
 */

/** One root run's part in its thread (or, with `n`, a group of a thread's roots). */
export interface ThreadContribution {
  project: string | null;
  thread_id: string | null;
  /** Latency of the run (or summed over the group), ms; null when not known. */
  latency_ms: number | string | null;
  n?: number | string | null;
  /** Roots with a latency (the group's); absent for one run. */
  latency_turns?: number | string | null;
}

export interface ThreadDelta {
  /** "" for runs without a project. */
  project: string;
  thread_id: string;
  turns: number;
  latency_ms: number;
  latency_turns: number;
}

export class ThreadDeltas {
  readonly threads = new Map<string, ThreadDelta>();

  add(r: ThreadContribution, sign: 1 | -1): void {
    if (r.thread_id === null || r.thread_id === undefined) return;
    const project = r.project ?? "";
    const key = JSON.stringify([project, String(r.thread_id)]);
    let d = this.threads.get(key);
    if (!d) this.threads.set(key, (d = { project, thread_id: String(r.thread_id), turns: 0, latency_ms: 0, latency_turns: 0 }));
    const n = r.n === undefined || r.n === null ? 1 : Number(r.n);
    const latencyTurns = r.latency_turns === undefined ? (r.latency_ms === null ? 0 : 1) : Number(r.latency_turns ?? 0);
    d.turns += sign * n;
    d.latency_ms += sign * Number(r.latency_ms ?? 0);
    d.latency_turns += sign * latencyTurns;
  }

  /** Every thread a write touched (a moved first or last turn changes no count), in key order. */
  touched(): ThreadDelta[] {
    return [...this.threads.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
  }
}
