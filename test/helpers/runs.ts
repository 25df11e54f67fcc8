import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function tempDir(prefix = "tp-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

let counter = 0;
/** A deterministic, valid uuid for tests (v7-shaped). */
export function testId(): string {
  counter++;
  const hex = counter.toString(16).padStart(12, "0");
  return `0192b3c4-d5e6-7f00-8000-${hex}`;
}

/** The one run factory: a valid root run, `overrides` on top. */
export function runRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = (overrides.id as string) ?? testId();
  return {
    id,
    trace_id: id,
    dotted_order: `20261122T101500123456Z${id}`,
    name: "test-run",
    run_type: "chain",
    start_time: "2026-11-22T10:15:00.123456Z",
    inputs: { question: "why?" },
    session_name: "default",
    ...overrides,
  };
}

/** A valid run of roughly `bytes` size, in `project`, with a random id (runRecord sized). */
export function makeRun(project = "test", bytes = 500): Record<string, unknown> & { id: string } {
  return runRecord({
    id: randomUUID(),
    name: "work",
    session_name: project,
    inputs: { text: "x".repeat(Math.max(0, bytes - 300)) },
  }) as Record<string, unknown> & { id: string };
}
