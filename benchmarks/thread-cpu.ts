/**
 * CPU time of this process split by thread, from /proc/self/task/<tid>/schedstat
 * (nanoseconds on the CPU, Linux): process.cpuUsage() counts every thread, and a
 * Node process runs more than its main thread: V8's platform workers (the
 * garbage collector's parallel and concurrent helpers, background compilers),
 * libuv's thread pool (fs, dns, zlib, crypto), and a few of node's own. The
 * threads all share the name `node`, so they are told apart by when they
 * started: those alive when this module was loaded (V8's workers and node's
 * own, started with the process) and those started later (libuv's pool starts
 * on its first piece of work). Elsewhere every figure is 0.
 */
import { readdirSync, readFileSync } from "node:fs";

/** CPU so far per thread, µs, keyed by thread id. */
export type ThreadCpu = Map<number, number>;

const pid = process.pid;

function cpuOf(tid: string): number {
  try {
    // schedstat: time on the CPU (ns), time waiting for it, timeslices.
    return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1000;
  } catch {
    return 0; // exited meanwhile, or no schedstat
  }
}

export function threadCpu(): ThreadCpu {
  const out: ThreadCpu = new Map();
  let tids: string[];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return out;
  }
  for (const t of tids) out.set(Number(t), cpuOf(t));
  return out;
}

/** The threads alive at load: the main thread, V8's platform workers and node's own. */
const early = new Set(threadCpu().keys());

export interface ThreadSplit {
  /** The main thread (JavaScript, the event loop, GC's main-thread part). */
  main: number;
  /** Threads alive when the process started, but the main one: V8's GC helpers and compilers, node's own. */
  v8: number;
  /** Threads started later: libuv's thread pool. */
  pool: number;
}

/** CPU per group of threads between two readings, µs. */
export function threadSplit(before: ThreadCpu, after: ThreadCpu): ThreadSplit {
  const s: ThreadSplit = { main: 0, v8: 0, pool: 0 };
  for (const [tid, us] of after) {
    const d = us - (before.get(tid) ?? 0);
    if (tid === pid) s.main += d;
    else if (early.has(tid)) s.v8 += d;
    else s.pool += d;
  }
  return s;
}
