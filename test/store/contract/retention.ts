/**
 * Retention: whole traces older than the cut-off go, with their attachments,
 * partial runs, orphans, feedback and staged OTLP spans and log records;
 * newer ones stay, and a second prune finds nothing.
 */
import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { eachStore, type OpenStore } from "./fixtures.js";

export const DAY = 86_400_000;

/** `t` as a stored time and as a dotted_order segment. */
export function times(t: Date): { time: string; dotted: string } {
  const time = t.toISOString().replace(/Z$/, "000Z");
  return { time, dotted: time.replace(/[-:.]/g, "") };
}

export function trace(start: Date, project = "retention") {
  const { time, dotted } = times(start);
  const rootId = randomUUID();
  const childId = randomUUID();
  const childStart = times(new Date(start.getTime() + 1000));
  return {
    rootId,
    childId,
    runs: [
      {
        id: rootId,
        trace_id: rootId,
        dotted_order: `${dotted}${rootId}`,
        name: "root",
        run_type: "chain",
        start_time: time,
        session_name: project,
      },
      {
        id: childId,
        trace_id: rootId,
        parent_run_id: rootId,
        dotted_order: `${dotted}${rootId}.${childStart.dotted}${childId}`,
        name: "child",
        run_type: "tool",
        start_time: childStart.time,
        session_name: project,
      },
    ],
  };
}

export function attachment(runId: string, text: string) {
  const data = Buffer.from(text);
  return { runId, name: "file.txt", contentType: "text/plain", data, sha256: createHash("sha256").update(data).digest("hex") };
}

function span(traceId: string, start: Date, parent: string | null = null) {
  const t = times(start).time;
  return {
    trace_id: traceId,
    span_id: randomUUID().replace(/-/g, "").slice(0, 16),
    parent_span_id: parent,
    name: "s",
    kind: 1,
    start_time: t,
    end_time: t,
    resource: "{}",
    scope: "{}",
    attributes: "{}",
    events: "[]",
    links: "[]",
    status: "{}",
  };
}

export function feedback(runId: string) {
  return { id: randomUUID(), run_id: runId, key: "correctness", score: 1 };
}

function logRecord(traceId: string, at: Date) {
  return {
    trace_id: traceId,
    span_id: "",
    record_key: randomUUID(),
    seq: 0,
    time: times(at).time,
    event_name: "app.note",
    severity: 9,
    body: "{}",
    attributes: "{}",
    resource: "{}",
    scope: "{}",
  };
}

export function retentionContract(open: OpenStore): void {
  describe("retention", () => {
    const store = eachStore(open);

    it("removes whole traces whose root started before the cut-off, with their attachments, partial runs, orphans and spans, and keeps the rest", async () => {
      const s = store();
      const now = Date.now();
      const old = trace(new Date(now - 40 * DAY));
      const fresh = trace(new Date(now - DAY));
      // A patch of the old trace whose post never came (no start, no dotted_order), and a run whose parent never came.
      const partial = randomUUID();
      const orphanId = randomUUID();
      const orphanTrace = randomUUID();
      const o = times(new Date(now - 35 * DAY));
      const orphan = {
        id: orphanId,
        trace_id: orphanTrace,
        parent_run_id: orphanTrace,
        dotted_order: `${o.dotted}${orphanTrace}.${o.dotted}${orphanId}`,
        name: "orphan",
        run_type: "llm",
        start_time: o.time,
        session_name: "retention",
      };
      await s.ingest({
        post: [...old.runs, ...fresh.runs, orphan],
        patch: [{ id: partial, trace_id: old.rootId, parent_run_id: old.rootId, end_time: o.time }],
        attachments: [attachment(old.childId, "old bytes"), attachment(fresh.childId, "fresh bytes")],
      });
      const oldSpanTrace = "a".repeat(32);
      const freshSpanTrace = "b".repeat(32);
      await s.storeSpans([span(oldSpanTrace, new Date(now - 40 * DAY)), span(freshSpanTrace, new Date(now - DAY))]);

      const r = await s.pruneTraces(new Date(now - 30 * DAY));
      expect(r.runs).toBe(4);
      expect(r.attachments).toBe(1);
      for (const id of [old.rootId, old.childId, partial, orphanId]) expect(await s.getRun(id)).toBeUndefined();
      expect(await s.listAttachments(old.childId)).toEqual([]);
      expect((await s.getRun(fresh.childId))?.name).toBe("child");
      expect((await s.getAttachment(fresh.childId, "file.txt"))?.data.toString()).toBe("fresh bytes");
      expect(await s.spansOfTrace(oldSpanTrace)).toEqual([]);
      expect(await s.spansOfTrace(freshSpanTrace)).toHaveLength(1);
      expect((await s.traceRuns(fresh.rootId)).map((x) => x.id)).toEqual([fresh.rootId, fresh.childId]);
      // Once more: nothing left to remove.
      expect((await s.pruneTraces(new Date(now - 30 * DAY))).runs).toBe(0);
    });

    it("removes a pruned trace's feedback and staged log records with it, and keeps a newer trace's", async () => {
      const s = store();
      const now = Date.now();
      const old = trace(new Date(now - 40 * DAY));
      const fresh = trace(new Date(now - DAY));
      await s.ingest({ post: [...old.runs, ...fresh.runs] });
      await s.storeFeedback([feedback(old.rootId), feedback(old.childId), feedback(fresh.childId)]);
      const oldSpanTrace = "c".repeat(32);
      const freshSpanTrace = "d".repeat(32);
      await s.storeSpans([span(oldSpanTrace, new Date(now - 40 * DAY)), span(freshSpanTrace, new Date(now - DAY))]);
      await s.storeLogs([logRecord(oldSpanTrace, new Date(now - 40 * DAY)), logRecord(freshSpanTrace, new Date(now - DAY))]);
      expect((await s.pruneTraces(new Date(now - 30 * DAY))).runs).toBe(2);
      expect((await s.feedbackOf([old.rootId, old.childId, fresh.childId])).map((f) => f.run_id)).toEqual([fresh.childId]);
      expect(await s.logsOfTrace(oldSpanTrace)).toEqual([]);
      expect(await s.logsOfTrace(freshSpanTrace)).toHaveLength(1);
    });
  });
}
