/** OTLP log staging: records by trace and span id, a resent record replacing itself, and which traces to convert again. */
import { describe, expect, it } from "vitest";
import type { LogInput, SpanInput } from "../../../src/store/index.js";
import { eachStore, type OpenStore } from "./fixtures.js";

const T = "d".repeat(32);
const U = "e".repeat(32);

function log(trace: string, spanId: string, key: string, o: Partial<LogInput> = {}): LogInput {
  return {
    trace_id: trace,
    span_id: spanId,
    record_key: key,
    seq: 0,
    time: "2026-11-01T10:00:00.500000Z",
    event_name: "gen_ai.user.message",
    severity: 9,
    body: '{"content":"hi"}',
    attributes: "{}",
    resource: "{}",
    scope: '{"name":"lib"}',
    ...o,
  };
}

function span(trace: string, spanId: string, parent: string | null): SpanInput {
  return {
    trace_id: trace,
    span_id: spanId,
    parent_span_id: parent,
    parent_remote: null,
    name: "chat",
    kind: 3,
    start_time: "2026-11-01T10:00:00.000000Z",
    end_time: "2026-11-01T10:00:01.000000Z",
    resource: "{}",
    scope: "{}",
    attributes: "{}",
    events: "[]",
    links: "[]",
    status: '{"code":0}',
  };
}

export function logsContract(open: OpenStore): void {
  describe("log staging", () => {
    const store = eachStore(open);

    it("keeps records by trace in time and request order, and a record sent again replaces itself", async () => {
      const s = store();
      await s.storeLogs([
        log(T, "0000000000000001", "b", { seq: 1, event_name: "gen_ai.choice" }),
        log(T, "0000000000000001", "a", { seq: 0 }),
        log(T, "", "c", { time: "2026-11-01T10:00:02.000000Z", event_name: "app.note" }),
      ]);
      await s.storeLogs([log(T, "0000000000000001", "a", { seq: 0 })]);
      const rows = await s.logsOfTrace(T);
      expect(rows.map((r) => [r.span_id, r.record_key, r.event_name])).toEqual([
        ["0000000000000001", "a", "gen_ai.user.message"],
        ["0000000000000001", "b", "gen_ai.choice"],
        ["", "c", "app.note"],
      ]);
      expect(rows[0]).toMatchObject({ body: '{"content":"hi"}', severity: 9, received_at: expect.any(String) });
    });

    it("names the traces to convert again: those whose root span is stored", async () => {
      const s = store();
      await s.storeSpans([span(T, "0000000000000001", null)]);
      await s.storeSpans([span(U, "0000000000000002", "00000000000000ff")]);
      expect(
        (
          await s.storeLogs([
            log(T, "0000000000000001", "a"),
            log(U, "0000000000000002", "a"),
            log("f".repeat(32), "0000000000000003", "a"),
          ])
        ).sort(),
      ).toEqual([T]);
      // The rootless trace waits on, its quiet time started again by the records.
      expect(await s.quietRootlessTraces(new Date(Date.now() + 60_000).toISOString(), 10)).toEqual([U]);
    });
  });
}
