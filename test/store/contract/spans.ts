/** OTLP span staging and the traces that wait for a root: the store's part of the rootless sweep. */
import { describe, expect, it } from "vitest";
import type { SpanInput } from "../../../src/store/index.js";
import { eachStore, sleep, type OpenStore } from "./fixtures.js";

function span(trace: string, spanId: string, parent: string | null, o: Partial<SpanInput> = {}): SpanInput {
  return {
    trace_id: trace.repeat(32),
    span_id: spanId.padStart(16, "0"),
    parent_span_id: parent && parent.padStart(16, "0"),
    parent_remote: null,
    name: `span ${spanId}`,
    kind: 1,
    start_time: "2026-11-01T10:00:00.000000Z",
    end_time: "2026-11-01T10:00:01.000000Z",
    resource: '{"service.name":"svc"}',
    scope: '{"name":"lib"}',
    attributes: '{"gen_ai.request.model":"gpt-4o"}',
    events: "[]",
    links: "[]",
    status: '{"code":0}',
    ...o,
  };
}

const A = "a".repeat(32);
const B = "b".repeat(32);
const C = "c".repeat(32);
const future = () => new Date(Date.now() + 60_000).toISOString();

export function spansContract(open: OpenStore): void {
  describe("spans: OTLP staging and traces waiting for a root", () => {
    const store = eachStore(open);

    it("stores spans as given and names the traces that now have a root (own root, or a parent flagged remote)", async () => {
      const child = span("a", "2", "1", { start_time: "2026-11-01T10:00:00.500000Z" });
      const root = span("a", "1", null);
      const before = new Date().toISOString();
      expect(await store().storeSpans([child, span("b", "5", "4"), root, span("c", "7", "6", { parent_remote: 1 })])).toEqual([A, C]);
      const stored = await store().spansOfTrace(A);
      expect(stored).toEqual([
        { ...root, received_at: expect.any(String) },
        { ...child, received_at: expect.any(String) },
      ]);
      expect(stored.every((s) => s.received_at >= before && s.received_at <= new Date().toISOString())).toBe(true);
      expect([
        await store().hasRootSpan(A),
        await store().hasRootSpan(B),
        await store().hasRootSpan(C),
        await store().hasRootSpan("d".repeat(32)),
      ]).toEqual([true, false, true, false]);
      // A span without its parent_remote is stored with null: not said.
      const { parent_remote: _, ...unsaid } = span("e", "9", "8");
      await store().storeSpans([unsaid]);
      expect((await store().spansOfTrace("e".repeat(32)))[0]?.parent_remote).toBeNull();
    });

    it("replaces a span stored again", async () => {
      await store().storeSpans([span("a", "1", null)]);
      await store().storeSpans([span("a", "1", null, { name: "renamed" })]);
      expect((await store().spansOfTrace(A)).map((s) => s.name)).toEqual(["renamed"]);
    });

    it("lists traces without a root once quiet, oldest first, at most `limit`, until their root comes", async () => {
      await store().storeSpans([span("b", "5", "4")]);
      await sleep(5);
      await store().storeSpans([span("c", "7", "6")]);
      await sleep(5);
      await store().storeSpans([span("a", "2", "1")]);
      expect(await store().quietRootlessTraces(future(), 10)).toEqual([B, C, A]);
      expect(await store().quietRootlessTraces(future(), 2)).toEqual([B, C]);
      expect(await store().quietRootlessTraces("2000-01-01T00:00:00.000Z", 10)).toEqual([]);
      expect(await store().storeSpans([span("c", "6", null)])).toEqual([C]);
      expect(await store().quietRootlessTraces(future(), 10)).toEqual([B, A]);
    });

    it("forgets a converted rootless trace unless a span of it came after the sweep looked", async () => {
      await store().storeSpans([span("a", "2", "1"), span("b", "5", "4")]);
      await sleep(5);
      const quietSince = new Date().toISOString();
      await sleep(5);
      await store().forgetRootless(A, quietSince);
      expect(await store().quietRootlessTraces(future(), 10)).toEqual([B]);
      await store().storeSpans([span("b", "3", "4")]);
      await store().forgetRootless(B, quietSince);
      expect(await store().quietRootlessTraces(future(), 10)).toEqual([B]);
      // Its spans stay stored either way: the next conversion reads them all.
      expect((await store().spansOfTrace(B)).map((s) => s.span_id).sort()).toEqual(["0000000000000003", "0000000000000005"]);
    });

    it("runs conversions of one trace one at a time, however many callers start them at once", async () => {
      await store().storeSpans([span("a", "1", null)]);
      const log: string[] = [];
      const convert = (n: number) => async () => {
        log.push(`in ${n}`);
        // The conversion reads the store while it holds the trace, as a real one does.
        await store().spansOfTrace(A);
        await sleep(20);
        log.push(`out ${n}`);
        return n;
      };
      expect(await Promise.all([1, 2, 3].map((n) => store().convertingTrace(A, convert(n))))).toEqual([1, 2, 3]);
      for (let i = 0; i < log.length; i += 2) expect(log[i + 1]).toBe(log[i]!.replace("in", "out"));
    });

    it("lets one sweep claim a quiet waiting trace, forgets it once converted, and forgets a trace whose conversion fails with the error returned", async () => {
      await store().storeSpans([span("a", "2", "1"), span("b", "5", "4")]);
      await sleep(5);
      const quietSince = new Date().toISOString();
      let converted = 0;
      const claims = await Promise.all(
        [1, 2].map(() =>
          store().sweepRootless(A, quietSince, async () => {
            converted++;
            await sleep(20);
          }),
        ),
      );
      expect(claims.filter((c) => c.claimed)).toHaveLength(1);
      expect(converted).toBe(1);
      expect(await store().sweepRootless(A, quietSince, async () => void converted++)).toEqual({ claimed: false });
      const failed = await store().sweepRootless(B, quietSince, async () => {
        throw new Error("no adapter could read it");
      });
      expect(failed.claimed).toBe(true);
      expect((failed.error as Error).message).toBe("no adapter could read it");
      expect(await store().quietRootlessTraces(future(), 10)).toEqual([]);
    });

    it("leaves a trace waiting when a span of it came after the sweep looked", async () => {
      await store().storeSpans([span("c", "2", "1")]);
      const quietSince = new Date(Date.now() - 60_000).toISOString();
      expect(await store().sweepRootless(C, quietSince, async () => undefined)).toEqual({ claimed: false });
      expect(await store().quietRootlessTraces(future(), 10)).toEqual([C]);
    });
  });
}
