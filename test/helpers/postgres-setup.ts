/**
 * vitest's global set-up: names the meeting directory where the run's shared
 * PostgreSQL cluster is started by the first test file that needs one
 * (sharedPostgres in postgres.ts), and stops that cluster when the run ends,
 * or when this process exits first. A run with no PostgreSQL test starts none.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SHARED_ENV, stopRunCluster } from "./postgres.js";

export default function setup(): (() => void) | undefined {
  // Another project of the same run set it up already: its teardown stops the cluster.
  if (process.env[SHARED_ENV]) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "tp-pg-run-"));
  process.env[SHARED_ENV] = dir;
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    stopRunCluster(dir);
  };
  process.once("exit", stop);
  return () => {
    stop();
    delete process.env[SHARED_ENV];
  };
}
