/**
 * The SQLite store's write of this tree against another tree's, in ONE
 * process: the bodies benchmarks/collector-load.ts sends (BATCH runs of ~2 KB,
 * fresh ids) are parsed and checked by this tree's route code, then written
 * by each tree's store into a fresh database of its own, in blocks of BLOCK
 * requests taking turns (two ingests per commit, the group commit's usual
 * size under benchmarks/collector.ts's load). Each block's CPU is measured
 * around the writes only. Both stores share the process, its JIT and the
 * machine's load from moment to moment, so the ratio of block pairs holds
 * still on a busy machine where per-process figures (collector-stages.ts)
 * wander by 10% between identical trees.
 *
 *   npx tsx benchmarks/store-write-ab.ts --baseline DIR [--blocks 40] [--block 50] [--batch 10] [--ids v4|v7]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { checkedBatch } from "./checked-batch.js";
import { runBodies } from "./run-bodies.js";
import { spread } from "./stats.js";
import { openStore } from "../src/store/open.js";
import type { CheckedBatch } from "../src/store/contract/runs.js";

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}
const baselineDir = arg("baseline", "");
if (!baselineDir) throw new Error("--baseline DIR is required (a tree with the store to compare against)");
const BLOCKS = Number(arg("blocks", "40"));
const BLOCK = Number(arg("block", "50"));
const BATCH = Number(arg("batch", "10"));
const IDS = arg("ids", "v4");
/** Ingests handed over together, so written in one commit. */
const PER_COMMIT = 2;
/** Blocks of each tree left out of the figures while the JIT and the page caches warm up. */
const WARM_BLOCKS = 4;

const base = (await import(pathToFileURL(join(resolve(baselineDir), "src/store/open.ts")).href)) as typeof import("../src/store/open.js");
const dir = mkdtempSync(join(tmpdir(), "tp-bench-store-ab-"));
const stores = { "this tree": await openStore(join(dir, "this.db")), baseline: await base.openStore(join(dir, "baseline.db")) };
const bodies = await runBodies(BATCH, IDS === "v7");

const checked = () => checkedBatch(bodies);
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const perRequest = { "this tree": [] as number[], baseline: [] as number[] };
for (let b = 0; b < BLOCKS + WARM_BLOCKS; b++) {
  const order = (b % 2 ? ["baseline", "this tree"] : ["this tree", "baseline"]) as (keyof typeof stores)[];
  for (const name of order) {
    const batches: CheckedBatch[] = [];
    for (let i = 0; i < BLOCK; i++) batches.push(await checked());
    const c0 = cpu();
    for (let i = 0; i < BLOCK; i += PER_COMMIT) await Promise.all(batches.slice(i, i + PER_COMMIT).map((x) => stores[name].ingest(x)));
    if (b >= WARM_BLOCKS) perRequest[name].push((cpu() - c0) / BLOCK);
  }
}
for (const s of Object.values(stores)) await s.close();
rmSync(dir, { recursive: true, force: true });
const ratios = perRequest["this tree"].map((t, i) => t / perRequest.baseline[i]!);
console.log(
  `store write, ${BLOCKS} blocks of ${BLOCK} requests of ${BATCH} runs (fresh ${IDS} ids) per tree, ${PER_COMMIT} per commit, trees taking turns in one process; CPU µs per request, median (min–max):`,
);
console.log(`  this tree ${spread(perRequest["this tree"], 0, " µs")}`);
console.log(`  baseline  ${spread(perRequest.baseline, 0, " µs")} (${resolve(baselineDir)})`);
console.log(`  this tree / baseline, block by block: ${spread(ratios, 2, "x")}`);
