/**
 * An in-memory RunWriter: every create and update in order, and the merged runs by id. For tests and debugging.
 * Reading it runs the work deferred off traced calls first (run/deferred.ts), as a Client's flush does.
 */
import { runDeferred } from "./deferred.js";
import type { Run, RunPatch } from "./schema.js";
import type { RunWriter, UpdateOptions } from "./writer.js";

type Call = { kind: "create"; run: Run } | { kind: "update"; id: string; patch: Omit<RunPatch, "id"> };

export class MemoryWriter implements RunWriter {
  readonly #calls: Call[] = [];
  readonly #runs = new Map<string, Run>();

  get calls(): Call[] {
    runDeferred();
    return this.#calls;
  }

  get runs(): Map<string, Run> {
    runDeferred();
    return this.#runs;
  }

  createRun(run: Run): void {
    this.#calls.push({ kind: "create", run: structuredClone(run) });
    this.#runs.set(run.id, { ...structuredClone(run), ...this.#runs.get(run.id) });
  }

  updateRun(id: string, patch: Omit<RunPatch, "id">, opts: UpdateOptions = {}): void {
    opts.prepare?.();
    this.#calls.push({ kind: "update", id, patch: structuredClone(patch) });
    const cur = this.#runs.get(id) ?? ({ id } as Run);
    const next = { ...cur };
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) (next as Record<string, unknown>)[k] = structuredClone(v);
    this.#runs.set(id, next);
  }

  list(): Run[] {
    return [...this.runs.values()];
  }
}
