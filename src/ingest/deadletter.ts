/** Batches the server refused for good (a 4xx other than 408/413/425/429) go here, one JSON line each. */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Op } from "./ops.js";

export interface DeadLetter {
  time: string;
  endpoint: string;
  status?: number;
  detail?: unknown;
  error: string;
  runs: { kind: Op["kind"]; id: string; run: Record<string, unknown> }[];
}

export class DeadLetterFile {
  constructor(readonly path: string) {}

  write(entry: Omit<DeadLetter, "time">): void {
    mkdirSync(dirname(this.path), { recursive: true });
    appendFileSync(this.path, JSON.stringify({ time: new Date().toISOString(), ...entry }) + "\n");
  }
}
