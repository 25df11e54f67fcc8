/** The run in progress, carried through async work by AsyncLocalStorage. */
import { envValue } from "../env.js";
import { AsyncLocalStorage } from "node:async_hooks";
import type { RunTree } from "../run/tree.js";

export const runContext = new AsyncLocalStorage<RunTree>();

/** The run in progress in this async context, if any. */
export function getCurrentRun(): RunTree | undefined {
  return runContext.getStore();
}

/**
 * `TRACEPIPE_TRACING=false` (or 0 / off / no) turns capture off: wrappers become
 * pass-throughs. Reads the environment now (when a function or client is wrapped).
 */
export function tracingEnabled(): boolean {
  const v = envValue("TRACEPIPE_TRACING");
  return v === undefined || !/^(false|0|off|no)$/i.test(v);
}

/** How long the per-call check trusts what it last read (ms): a change made at run time applies within it. */
export const TRACING_RECHECK_MS = 1000;
let onAtLastRead = true;
/** performance.now() of the last read; -Infinity: never read. */
let lastRead = -Infinity;

/**
 * The per-call check of wrapped functions: the setting as read at most
 * TRACING_RECHECK_MS ago. Reading process.env is a lookup in the C++
 * environment per variable (two with LangSmith's fallback) on every traced
 * call's path, for a setting that rarely changes; a monotonic clock read is
 * a small fraction of that.
 */
export function tracingOn(): boolean {
  const now = performance.now();
  if (now - lastRead < TRACING_RECHECK_MS) return onAtLastRead;
  lastRead = now;
  onAtLastRead = tracingEnabled();
  return onAtLastRead;
}
