/**
 * The collector under test for benchmarks/collector.ts, in a process of its
 * own so its CPU is its own (the load generator and the benchmark's own
 * bookkeeping are elsewhere):
 *   node --import tsx benchmarks/collector-server.ts <root> <db> [profile|no-profile] [sources|dist]
 * <root> is the tree whose sources are measured (this checkout, or an
 * unchanged copy for an A/B in the same run). Prints "listening on <url>",
 * then answers IPC messages: "start" marks the CPU clock and starts the
 * sampling profiler; "stop" replies {cpuUs, mainUs, stages}: the process's
 * CPU, its main (JavaScript) thread's, each stage's share of the main
 * thread's samples (cpu-stages.ts), and the SQLite store's commits and the
 * ingests they held (its group commit, when the tree has one); "close" closes
 * the collector and exits.
 */
import { Session } from "node:inspector/promises";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { stagesOf, type CpuProfile } from "./cpu-stages.js";

const [root, db, profileArg, codeArg] = process.argv.slice(2) as [string, string, string | undefined, string | undefined];
const profile = profileArg !== "no-profile";
// "dist": the tree's compiled package, as `tracepipe serve` runs it (built with `npm run build`).
const entry = codeArg === "dist" ? "dist/src/server/index.js" : "src/server/app.ts";
if (codeArg === "dist" && !existsSync(join(root, entry))) throw new Error(`${root} has no ${entry}: run npm run build there`);
const { createCollector } = (await import(pathToFileURL(join(root, entry)).href)) as typeof import("../src/server/app.js");
const collector = await createCollector({ db, rateLimits: false });
const { url } = await collector.listen(0);

const session = new Session();
session.connect();
/** The SQLite store's group-commit counters (a private field: the benchmark reads what the store does not publish). */
const groupStats = () => (collector.store as unknown as { group?: { stats: { groups: number; ingests: number } } }).group?.stats;
let groups0 = { groups: 0, ingests: 0 };
let cpu0 = 0;
let main0 = 0;
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
/** The main thread's CPU (Linux: utime + stime of the thread whose id is the pid, in clock ticks of 10 ms), µs; NaN elsewhere. */
function mainThreadUs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return NaN;
  }
}

process.on("message", (m: string) => {
  void (async () => {
    if (m === "start") {
      if (profile) {
        await session.post("Profiler.enable");
        // A coarse interval: the sampler's own cost stays small against the request work it attributes.
        await session.post("Profiler.setSamplingInterval", { interval: 1000 });
        await session.post("Profiler.start");
      }
      cpu0 = cpuUs();
      main0 = mainThreadUs();
      groups0 = { ...(groupStats() ?? groups0) };
      process.send!({ started: true });
    } else if (m === "stop") {
      const cpu = cpuUs() - cpu0;
      const main = mainThreadUs() - main0;
      const prof = profile ? ((await session.post("Profiler.stop")) as { profile: CpuProfile }).profile : undefined;
      // For a closer look (Chrome DevTools, or by function): TRACEPIPE_BENCH_PROFILE=out.cpuprofile.
      if (prof && process.env.TRACEPIPE_BENCH_PROFILE) writeFileSync(process.env.TRACEPIPE_BENCH_PROFILE, JSON.stringify(prof));
      const stages = prof ? stagesOf(prof) : undefined;
      const g = groupStats();
      const commits = g && { groups: g.groups - groups0.groups, ingests: g.ingests - groups0.ingests };
      process.send!({ cpuUs: cpu, mainUs: main, stages, commits });
    } else if (m === "close") {
      session.disconnect();
      await collector.close();
      process.exit(0);
    }
  })();
});
console.log(`listening on ${url}`);
