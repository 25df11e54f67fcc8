/**
 * Retention on both stores beyond the conformance suite's (contract/retention.ts):
 * ingest carries on while a large prune runs; PostgreSQL drops a whole
 * partition that ended before the cut-off.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/contract/store.js";
import { openStore } from "../../src/store/open.js";
import { weekStart } from "../../src/store/postgres/partitions.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { tempDir } from "../helpers/runs.js";
import { attachment, DAY, feedback, trace } from "./contract/retention.js";

const skipPg = skipWithoutPostgres();

const kinds: { name: string; skip: boolean; target: () => Promise<string> }[] = [];
let cluster: PostgresDatabases | undefined;
kinds.push({ name: "SQLite", skip: false, target: async () => join(tempDir("tp-retention-"), "traces.db") });
kinds.push({ name: "PostgreSQL", skip: skipPg, target: async () => cluster!.database() });

beforeAll(async () => {
  if (!skipPg) cluster = await sharedPostgres();
}, 120_000);

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`retention (${kind.name})`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await openStore(await kind.target());
    }, 60_000);
    afterAll(async () => {
      await store?.close();
    });

    it("keeps ingesting while it prunes many traces", async () => {
      const now = Date.now();
      const olds = Array.from({ length: 1500 }, (_, i) => trace(new Date(now - 50 * DAY + i * 1000), "retention-many"));
      for (let i = 0; i < olds.length; i += 250) await store.ingest({ post: olds.slice(i, i + 250).flatMap((t) => t.runs) });
      let pruneDone = 0;
      let ingestDone = 0;
      const prune = store.pruneTraces(new Date(now - 30 * DAY)).then((r) => {
        pruneDone = performance.now();
        return r;
      });
      const fresh = trace(new Date(now), "retention-many");
      await store.ingest({ post: fresh.runs });
      ingestDone = performance.now();
      const r = await prune;
      expect(ingestDone).toBeLessThan(pruneDone);
      expect(r.runs).toBe(3000);
      expect(await store.countRuns("retention-many")).toBe(2);
    }, 120_000);
  });
}

describe.skipIf(skipPg)("retention (PostgreSQL partitions)", () => {
  it("drops a whole weekly partition that ended before the cut-off, with its runs' attachments and keys", async () => {
    const store = await openStore(await cluster!.database());
    try {
      const thisWeek = weekStart(new Date());
      const lastWeek = trace(new Date(thisWeek.getTime() - DAY));
      const current = trace(new Date(thisWeek.getTime() + 60_000));
      await store.ingest({ post: [...lastWeek.runs, ...current.runs], attachments: [attachment(lastWeek.rootId, "x")] });
      await store.storeFeedback([feedback(lastWeek.childId), feedback(current.childId)]);
      const r = await store.pruneTraces(thisWeek);
      const dropped = `runs_p${new Date(thisWeek.getTime() - 7 * DAY).toISOString().slice(0, 10).replaceAll("-", "")}`;
      expect(r.partitionsDropped).toContain(dropped);
      expect(r.runs).toBe(2);
      expect(r.attachments).toBe(1);
      expect(await store.getRun(lastWeek.rootId)).toBeUndefined();
      expect((await store.getRun(current.rootId))?.name).toBe("root");
      expect((await store.feedbackOf([lastWeek.childId, current.childId])).map((f) => f.run_id)).toEqual([current.childId]);
      // The run's id is free again: posting it anew creates it.
      expect((await store.ingest({ post: [lastWeek.runs[0]!] })).created).toBe(1);
    } finally {
      await store.close();
    }
  }, 60_000);
});
