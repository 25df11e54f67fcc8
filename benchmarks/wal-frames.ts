/**
 * Which B-trees a request's write dirties: the bodies benchmarks/collector-load.ts
 * sends (BATCH runs of ~2 KB, fresh ids) are written through the SQLite store
 * (PER ingests per commit), then after a checkpoint that empties the WAL,
 * REQUESTS more; each WAL frame is one page a commit wrote, and its header
 * names the page, which SQLite's dbstat table maps to its table or index.
 * Prints frames per request and per commit, by B-tree: what a schema change
 * saves in writes, without timing anything (so it holds on a busy machine).
 *
 *   npx tsx benchmarks/wal-frames.ts [DIR] [--ids v4|v7] [--per 2] [--warm 3000] [--requests 200]
 * DIR: the tree whose store is measured (default this one).
 */
import Database from "better-sqlite3";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { checkedBatch } from "./checked-batch.js";
import { runBodies } from "./run-bodies.js";

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}
const tree =
  process.argv[2] && !process.argv[2].startsWith("--") ? resolve(process.argv[2]) : fileURLToPath(new URL("../", import.meta.url));
const PER = Number(arg("per", "2"));
const WARM = Number(arg("warm", "3000"));
const REQUESTS = Number(arg("requests", "200"));
const IDS = arg("ids", "v4");

const { openStore } = (await import(pathToFileURL(join(tree, "src/store/open.ts")).href)) as typeof import("../src/store/open.js");
const dir = mkdtempSync(join(tmpdir(), "tp-bench-frames-"));
const path = join(dir, "traces.db");
const store = await openStore(path);
const bodies = await runBodies(10, IDS === "v7");
const checked = () => checkedBatch(bodies);
async function write(requests: number): Promise<void> {
  for (let i = 0; i < requests; i += PER) {
    const group = await Promise.all(Array.from({ length: PER }, checked));
    await Promise.all(group.map((b) => store.ingest(b)));
  }
}
await write(WARM);
const side = new Database(path);
side.pragma("wal_checkpoint(TRUNCATE)");
await write(REQUESTS);
const wal = readFileSync(`${path}-wal`);
const pageSize = wal.readUInt32BE(8);
const pages: number[] = [];
for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) pages.push(wal.readUInt32BE(at));
const names = new Map<number, string>();
for (const r of side.prepare("SELECT name, pageno FROM dbstat").all() as { name: string; pageno: number }[]) names.set(r.pageno, r.name);
const by = new Map<string, number>();
for (const p of pages) {
  const name = names.get(p) ?? "(freed or new)";
  by.set(name, (by.get(name) ?? 0) + 1);
}
const runs = (side.prepare("SELECT count(*) AS n FROM runs").get() as { n: number }).n;
side.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
console.log(
  `${tree}: ${REQUESTS} requests of 10 runs (fresh ${IDS} ids), ${PER} per commit, after ${WARM} (${runs} runs stored): ${(pages.length / REQUESTS).toFixed(1)} WAL frames per request, ${((pages.length * PER) / REQUESTS).toFixed(1)} per commit (${pageSize}-byte pages)`,
);
for (const [name, n] of [...by].sort((a, b) => b[1] - a[1])) console.log(`  ${name.padEnd(28)} ${(n / REQUESTS).toFixed(2)} per request`);
