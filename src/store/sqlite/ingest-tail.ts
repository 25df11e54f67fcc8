/**
 * What ingests add to rows that many runs share: the monitoring rollups'
 * cells (one per project, hour, scope, model, provider and name) and the
 * projects they name. A group of ingests (group-commit.ts) sums its parts
 * here and writes each such row once, where each ingest would otherwise read
 * and write the same rows in turn.
 */
import { RollupDeltas } from "../rollup.js";

export class IngestTail {
  readonly rollups = new RollupDeltas();
  /** Each project named, with the time of the first ingest that named it (when it is created if new). */
  readonly projects = new Map<string, string>();

  /** One ingest's part, added once nothing of its own writes can fail any more. */
  add(rollups: RollupDeltas, projects: Iterable<string>, at: string): void {
    for (const c of rollups.cells.values()) this.rollups.addCell(c);
    for (const p of projects) if (!this.projects.has(p)) this.projects.set(p, at);
  }
}
