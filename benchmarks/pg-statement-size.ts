/**
 * What one statement of new runs (store/postgres/new-runs.ts) costs by how
 * many requests it carries: the collector's side (combining the batches,
 * building the parameters, node-postgres' protocol and the reply) and the
 * PostgreSQL backend's CPU, per request, for statements of K requests of
 * BATCH runs (the group commit's groups, new-runs-groups.ts). Statements are
 * sent one after another on one connection, the sizes taking turns block by
 * block so they share the machine's load; the batches are built beforehand
 * (the collector's parsing and checks, and the rows, are the same whatever
 * the grouping) and only the statement is measured. The difference between
 * K = 1 and larger K is the fixed cost a statement adds to a request that
 * goes alone: what grouping saves.
 *
 *   npx tsx benchmarks/pg-statement-size.ts [--sizes 1,2,3,6,12] [--blocks 12] [--requests 60] [--batch 10]
 */
import { readFileSync } from "node:fs";
import { checkedBatch } from "./checked-batch.js";
import { runBodies } from "./run-bodies.js";
import { spread } from "./stats.js";
import { startPostgres } from "../test/helpers/postgres.js";
import { PostgresStore } from "../src/store/postgres/store.js";
import { insertNewRuns, sendNewRuns, type NewRunsBatch } from "../src/store/postgres/new-runs.js";
import { combineBatches } from "../src/store/postgres/new-runs-groups.js";
import type { Obj } from "../src/internal/obj.js";

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}
const SIZES = arg("sizes", "1,2,3,6,12").split(",").map(Number);
const BLOCKS = Number(arg("blocks", "12"));
const REQUESTS = Number(arg("requests", "60"));
const BATCH = Number(arg("batch", "10"));
const WARM_BLOCKS = 2;

/** A backend's time on the CPU so far, µs (schedstat: nanoseconds). */
const backendUs = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1000;
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const cluster = await startPostgres();
try {
  // One connection, so every statement runs on the backend measured.
  const store = await PostgresStore.open(await cluster.database(), { max: 1 });
  const bodies = await runBodies(BATCH, false);
  const send = sendNewRuns(store.pool);
  /** The statement input of a fresh request, as the store builds it before the group commit. */
  async function prepared(): Promise<NewRunsBatch> {
    const checked = await checkedBatch(bodies);
    let out: NewRunsBatch | undefined;
    await insertNewRuns(
      async (b) => {
        out = b;
        return true;
      },
      checked.post as readonly Obj[],
      { normalizeOnIngest: true, webhookOutbox: false },
    );
    return out!;
  }
  const pid = (await store.pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  const client: Record<number, number[]> = {};
  const backend: Record<number, number[]> = {};
  for (let b = 0; b < BLOCKS + WARM_BLOCKS; b++) {
    const order = b % 2 ? [...SIZES].reverse() : SIZES;
    for (const k of order) {
      const batches: NewRunsBatch[] = [];
      for (let i = 0; i < REQUESTS; i++) batches.push(await prepared());
      const c0 = cpuUs();
      const b0 = backendUs(pid);
      for (let i = 0; i < REQUESTS; i += k) {
        const combined = combineBatches(batches.slice(i, i + k));
        const written = await send(combined);
        if (written !== combined.rows.ids.length) throw new Error(`statement wrote ${written} of ${combined.rows.ids.length} runs`);
      }
      if (b >= WARM_BLOCKS) {
        (client[k] ??= []).push((cpuUs() - c0) / REQUESTS);
        (backend[k] ??= []).push((backendUs(pid) - b0) / REQUESTS);
      }
    }
  }
  await store.close();
  console.log(
    `statements of new runs by requests per statement (${BATCH} runs a request), ${BLOCKS} blocks of ${REQUESTS} requests per size, sizes taking turns; CPU µs per request, median (min–max):`,
  );
  console.log("requests/statement  collector-side  postgres-backend  both");
  for (const k of SIZES) {
    const both = client[k]!.map((c, i) => c + backend[k]![i]!);
    console.log(`${k}  ${spread(client[k]!, 0, "")}  ${spread(backend[k]!, 0, "")}  ${spread(both, 0, "")}`);
  }
} finally {
  await cluster.close();
}
