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
 * pass-throughs. Read when a function is wrapped, and again per call, so it can
 * be flipped at run time.
 */
export function tracingEnabled(): boolean {
  const v = envValue("TRACEPIPE_TRACING");
  return v === undefined || !/^(false|0|off|no)$/i.test(v);
}
