import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function tempDir(prefix = "tp-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A valid run of roughly `bytes` size. */
export function makeRun(project = "test", bytes = 500): Record<string, unknown> & { id: string } {
  const id = randomUUID();
  return {
    id,
    trace_id: id,
    dotted_order: `20261122T101500123456Z${id}`,
    name: "work",
    run_type: "chain",
    start_time: "2026-11-22T10:15:00.123456Z",
    session_name: project,
    inputs: { text: "x".repeat(Math.max(0, bytes - 300)) },
  };
}
