/**
 * CPU time and context switches of processes, from /proc (Linux), for the
 * benchmarks that split a load's cost between the processes serving it: a
 * process's user + system time (all its threads), its threads' voluntary and
 * involuntary context switches, and PostgreSQL's server split into client
 * backends, its own background processes, and children that exited meanwhile
 * (counted through the postmaster's reaped-children time). Elsewhere every
 * figure is 0.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICK_MS = 10; // USER_HZ 100 on Linux

export interface ProcUse {
  cpuMs: number;
  voluntary: number;
  involuntary: number;
}
export const NO_USE: ProcUse = { cpuMs: 0, voluntary: 0, involuntary: 0 };

export const addUse = (a: ProcUse, b: ProcUse): ProcUse => ({
  cpuMs: a.cpuMs + b.cpuMs,
  voluntary: a.voluntary + b.voluntary,
  involuntary: a.involuntary + b.involuntary,
});
export const subUse = (a: ProcUse, b: ProcUse): ProcUse => ({
  cpuMs: a.cpuMs - b.cpuMs,
  voluntary: a.voluntary - b.voluntary,
  involuntary: a.involuntary - b.involuntary,
});

/** The fields of /proc/<pid>/stat after the command name (index 0 is field 3, the state). */
function statFields(pid: number): string[] | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    return s.slice(s.lastIndexOf(") ") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** One process's use so far (0 once it has exited). */
export function useOf(pid: number): ProcUse {
  const f = statFields(pid);
  if (!f) return NO_USE;
  let voluntary = 0;
  let involuntary = 0;
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const st = readFileSync(`/proc/${pid}/task/${t}/status`, "utf8");
      voluntary += Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(st)?.[1] ?? 0);
      involuntary += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(st)?.[1] ?? 0);
    }
  } catch {
    // exited meanwhile
  }
  return { cpuMs: (Number(f[11]) + Number(f[12])) * TICK_MS, voluntary, involuntary };
}

/** CPU time of the children a process has reaped (exited backends, autovacuum workers), ms. */
function reapedCpuMs(pid: number): number {
  const f = statFields(pid);
  return f ? (Number(f[13]) + Number(f[14])) * TICK_MS : 0;
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function titleOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
  } catch {
    return "";
  }
}
/** A client backend's process title: `postgres: <user> <database> <host>(<port>) <state>`. */
const isClientBackend = (title: string) => /^postgres: \S+ \S+ [\d.:a-f]+\(\d+\)/.test(title);

/** Where PostgreSQL's processes are now and what each has used. */
export interface ServerSnapshot {
  backends: Map<number, ProcUse>;
  background: Map<number, ProcUse>;
  /** Process titles without the `postgres: ` prefix (`walwriter`, `autovacuum launcher`, ...). */
  titles: Map<number, string>;
  /** The postmaster's own use, and its reaped children's CPU (ms). */
  postmaster: ProcUse;
  reapedMs: number;
}

export function serverSnapshot(postmaster: number): ServerSnapshot {
  const backends = new Map<number, ProcUse>();
  const background = new Map<number, ProcUse>();
  const titles = new Map<number, string>();
  for (const pid of childrenOf(postmaster)) {
    const title = titleOf(pid);
    titles.set(pid, title.replace(/^postgres: /, "").replace(/^(autovacuum worker).*/, "$1"));
    (isClientBackend(title) ? backends : background).set(pid, useOf(pid));
  }
  return { backends, background, titles, postmaster: useOf(postmaster), reapedMs: reapedCpuMs(postmaster) };
}

/**
 * What the server used between two snapshots: client backends (except `exclude`, e.g. the benchmark's own), its background
 * processes and the postmaster, children that exited meanwhile (autovacuum workers, ended connections), how many backends
 * there are at the end and how many of them started meanwhile (connections opened).
 */
export function serverUse(
  a: ServerSnapshot,
  b: ServerSnapshot,
  exclude: ReadonlySet<number> = new Set(),
): {
  backends: ProcUse;
  background: ProcUse;
  byTitle: Map<string, number>;
  exitedMs: number;
  backendCount: number;
  backendsStarted: number;
} {
  const sum = (m0: Map<number, ProcUse>, m1: Map<number, ProcUse>, pick: (pid: number) => boolean) => {
    let u = NO_USE;
    for (const [pid, use] of m1) if (pick(pid)) u = addUse(u, subUse(use, m0.get(pid) ?? NO_USE));
    return u;
  };
  const backends = sum(a.backends, b.backends, (p) => !exclude.has(p));
  const background = addUse(
    sum(a.background, b.background, () => true),
    subUse(b.postmaster, a.postmaster),
  );
  const live = [...b.backends.keys()].filter((p) => !exclude.has(p));
  const byTitle = new Map<string, number>();
  for (const [pid, use] of b.background) {
    const t = b.titles.get(pid) ?? "?";
    byTitle.set(t, (byTitle.get(t) ?? 0) + use.cpuMs - (a.background.get(pid)?.cpuMs ?? 0));
  }
  return {
    backends,
    background,
    byTitle,
    exitedMs: b.reapedMs - a.reapedMs,
    backendCount: live.length,
    backendsStarted: live.filter((p) => !a.backends.has(p)).length,
  };
}

/** The whole machine's busy CPU so far (every core, every process), ms: what others ran meanwhile shows as the gap to the sum of ours. */
export function machineBusyMs(): number {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait
    const busy = f.slice(0, 8).reduce((n, v, i) => (i === 3 || i === 4 ? n : n + v), 0);
    return busy * TICK_MS;
  } catch {
    return 0;
  }
}
