/**
 * vitest's global set-up: before a whole-suite run, build dist/ when a source
 * changed since it was last built. The suite starts some hundred and fifty CLI
 * and `serve` processes (test/helpers/cli.ts); from a fresh dist/ each loads
 * compiled modules, where from a stale one each transforms the sources through
 * tsx. The package tests build it anyway (test/package/dist.ts), but only once
 * they start, with the other workers' processes already running through tsx.
 * A run of chosen files (`vitest run test/x`) leaves dist/ alone: a file or two
 * start few processes, and editing then re-running one test stays quick.
 */
import type { TestProject } from "vitest/node";
import { ensureBuilt } from "../package/dist.js";

export default function setup(project: TestProject): void {
  // The command line's file filters (vitest keeps them on its instance; not part of its typed API).
  const filters = (project.vitest as unknown as { filenamePattern?: readonly string[] }).filenamePattern;
  if (filters && filters.length > 0) return;
  ensureBuilt();
}
