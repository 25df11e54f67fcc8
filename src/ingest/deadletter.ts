/**
 * Batches the server refused for good (a 4xx other than 408/413/425/429) go
 * here, one JSON line each. Disk trouble never reaches the host: the file
 * moves to os.tmpdir() when its directory is unusable, and write() reports
 * false when that fails too (the caller counts the runs as dropped).
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { createHash } from "node:crypto";
import { makeSafe } from "../run/safe.js";
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
  private readonly paths: string[];
  private active = 0;

  constructor(
    readonly path: string,
    private readonly warn: (msg: string) => void = () => {},
  ) {
    const tag = createHash("sha256").update(resolve(path)).digest("hex").slice(0, 16);
    const fallback = join(tmpdir(), `tracepipe-${tag}-${basename(path)}`);
    this.paths = resolve(fallback) === resolve(path) ? [path] : [path, fallback];
  }

  /** The file written to now, or undefined when none works. */
  get writePath(): string | undefined {
    return this.paths[this.active];
  }

  write(entry: Omit<DeadLetter, "time">): boolean {
    let text: string;
    const full = { time: new Date().toISOString(), ...entry };
    try {
      text = JSON.stringify(full) + "\n";
    } catch {
      text = JSON.stringify(makeSafe(full).value) + "\n";
    }
    while (this.active < this.paths.length) {
      const p = this.paths[this.active]!;
      try {
        mkdirSync(dirname(p), { recursive: true });
        appendFileSync(p, text);
        return true;
      } catch (err) {
        this.active++;
        const next = this.paths[this.active];
        this.warn(
          next
            ? `tracepipe: dead-letter file ${p} is not writable (${(err as Error).message}); using ${next}`
            : `tracepipe: no writable dead-letter file (${p}: ${(err as Error).message}); refused runs are dropped and counted in client.stats.dropped`,
        );
      }
    }
    return false;
  }
}
