/**
 * Retention on both stores: whole traces older than the cut-off go, with
 * their attachments, feedback and staged OTLP spans and log records; newer
 * ones stay; ingest carries on while a large prune runs; PostgreSQL drops a
 * whole partition that ended before the cut-off.
 */
import { createHash, randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/contract/store.js";
import { openStore } from "../../src/store/open.js";
import { weekStart } from "../../src/store/postgres/partitions.js";
import { skipWithoutPostgres, startPostgres, type RunningPostgres } from "../helpers/postgres.js";
import { tempDir } from "../helpers/runs.js";

const DAY = 86_400_000;
const skipPg = skipWithoutPostgres();

/** `t` as a stored time and as a dotted_order segment. */
function times(t: Date): { time: string; dotted: string } {
  const time = t.toISOString().replace(/Z$/, "000Z");
  return { time, dotted: time.replace(/[-:.]/g, "") };
}

function trace(start: Date, project = "retention") {
  const { time, dotted } = times(start);
  const rootId = randomUUID();
  const childId = randomUUID();
  const childStart = times(new Date(start.getTime() + 1000));
  return {
    rootId,
    childId,
    runs: [
      { id: rootId, trace_id: rootId, dotted_order: `${dotted}${rootId}`, name: "root", run_type: "chain", start_time: time, session_name: project },
      { id: childId, trace_id: rootId, parent_run_id: rootId, dotted_order: `${dotted}${rootId}.${childStart.dotted}${childId}`, name: "child", run_type: "tool", start_time: childStart.time, session_name: project },
    ],
  };
}

function attachment(runId: string, text: string) {
  const data = Buffer.from(text);
  return { runId, name: "file.txt", contentType: "text/plain", data, sha256: createHash("sha256").update(data).digest("hex") };
}

function span(traceId: string, start: Date, parent: string | null = null) {
  const t = times(start).time;
  return { trace_id: traceId, span_id: randomUUID().replace(/-/g, "").slice(0, 16), parent_span_id: parent, name: "s", kind: 1, start_time: t, end_time: t, resource: "{}", scope: "{}", attributes: "{}", events: "[]", links: "[]", status: "{}" };
}

function feedback(runId: string) {
  return { id: randomUUID(), run_id: runId, key: "correctness", score: 1 };
}

function logRecord(traceId: string, at: Date) {
  return { trace_id: traceId, span_id: "", record_key: randomUUID(), seq: 0, time: times(at).time, event_name: "app.note", severity: 9, body: "{}", attributes: "{}", resource: "{}", scope: "{}" };
}

const kinds: { name: string; skip: boolean; target: () => Promise<string> }[] = [];
let cluster: RunningPostgres | undefined;
kinds.push({ name: "SQLite", skip: false, target: async () => join(tempDir("tp-retention-"), "traces.db") });
kinds.push({ name: "PostgreSQL", skip: skipPg, target: async () => cluster!.database() });

beforeAll(async () => {
  if (!skipPg) cluster = await startPostgres();
}, 120_000);
afterAll(async () => {
  await cluster?.close();
});

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`retention (${kind.name})`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await openStore(await kind.target());
    }, 60_000);
    afterAll(async () => {
      await store?.close();
    });

    it("removes whole traces whose root started before the cut-off, with their attachments, partial runs, orphans and spans, and keeps the rest", async () => {
      const now = Date.now();
      const old = trace(new Date(now - 40 * DAY));
      const fresh = trace(new Date(now - DAY));
      // A patch of the old trace whose post never came (no start, no dotted_order), and a run whose parent never came.
      const partial = randomUUID();
      const orphanId = randomUUID();
      const orphanTrace = randomUUID();
      const o = times(new Date(now - 35 * DAY));
      const orphan = { id: orphanId, trace_id: orphanTrace, parent_run_id: orphanTrace, dotted_order: `${o.dotted}${orphanTrace}.${o.dotted}${orphanId}`, name: "orphan", run_type: "llm", start_time: o.time, session_name: "retention" };
      await store.ingest({
        post: [...old.runs, ...fresh.runs, orphan],
        patch: [{ id: partial, trace_id: old.rootId, parent_run_id: old.rootId, end_time: o.time }],
        attachments: [attachment(old.childId, "old bytes"), attachment(fresh.childId, "fresh bytes")],
      });
      const oldSpanTrace = "a".repeat(32);
      const freshSpanTrace = "b".repeat(32);
      await store.storeSpans([span(oldSpanTrace, new Date(now - 40 * DAY)), span(freshSpanTrace, new Date(now - DAY))]);

      const r = await store.pruneTraces(new Date(now - 30 * DAY));
      expect(r.runs).toBe(4);
      expect(r.attachments).toBe(1);
      for (const id of [old.rootId, old.childId, partial, orphanId]) expect(await store.getRun(id)).toBeUndefined();
      expect(await store.listAttachments(old.childId)).toEqual([]);
      expect((await store.getRun(fresh.childId))?.name).toBe("child");
      expect((await store.getAttachment(fresh.childId, "file.txt"))?.data.toString()).toBe("fresh bytes");
      expect(await store.spansOfTrace(oldSpanTrace)).toEqual([]);
      expect(await store.spansOfTrace(freshSpanTrace)).toHaveLength(1);
      expect((await store.traceRuns(fresh.rootId)).map((x) => x.id)).toEqual([fresh.rootId, fresh.childId]);
      // Once more: nothing left to remove.
      expect((await store.pruneTraces(new Date(now - 30 * DAY))).runs).toBe(0);
    });

    it("removes a pruned trace's feedback and staged log records with it, and keeps a newer trace's", async () => {
      const now = Date.now();
      const old = trace(new Date(now - 40 * DAY));
      const fresh = trace(new Date(now - DAY));
      await store.ingest({ post: [...old.runs, ...fresh.runs] });
      await store.storeFeedback([feedback(old.rootId), feedback(old.childId), feedback(fresh.childId)]);
      const oldSpanTrace = "c".repeat(32);
      const freshSpanTrace = "d".repeat(32);
      await store.storeSpans([span(oldSpanTrace, new Date(now - 40 * DAY)), span(freshSpanTrace, new Date(now - DAY))]);
      await store.storeLogs([logRecord(oldSpanTrace, new Date(now - 40 * DAY)), logRecord(freshSpanTrace, new Date(now - DAY))]);
      expect((await store.pruneTraces(new Date(now - 30 * DAY))).runs).toBe(2);
      expect((await store.feedbackOf([old.rootId, old.childId, fresh.childId])).map((f) => f.run_id)).toEqual([fresh.childId]);
      expect(await store.logsOfTrace(oldSpanTrace)).toEqual([]);
      expect(await store.logsOfTrace(freshSpanTrace)).toHaveLength(1);
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
