/**
 * The webhook outbox: one delivery per completed root run that names a
 * webhook, written with the completion (however the post and patch race),
 * claimed for a lease by one claimer at a time, claimed again once a lease
 * ends, and every attempt kept.
 */
import { describe, expect, it } from "vitest";
import type { ClaimedWebhook, Store } from "../../../src/store/index.js";
import { childRun, eachStore, rootRun, sleep, type OpenStore } from "./fixtures.js";

const HOOK = "https://hooks.example.com/done?token=t";
const END = "2026-11-22T10:15:02.000000Z";
const asking = (o: Record<string, unknown> = {}) => rootRun({ extra: { metadata: { webhook: HOOK } }, ...o });
const attempt = (o: { status_code?: number; error?: string } = {}) => ({ at: new Date().toISOString(), duration_ms: 12, ...o });

async function claimAll(store: Store, leaseMs = 60_000): Promise<ClaimedWebhook[]> {
  return store.claimWebhooks(1000, leaseMs);
}

export function webhookOutboxContract(open: OpenStore): void {
  describe("the webhook outbox", () => {
    const store = eachStore(open, { webhookOutbox: true });

    it("writes one pending delivery when a root run that names a webhook completes, and none for children, runs without one, or runs still open", async () => {
      const root = asking();
      const child = childRun(root, { extra: { metadata: { webhook: HOOK } }, end_time: END });
      const plain = rootRun({ end_time: END });
      const open_ = asking();
      await store().ingest({ post: [root, child, plain, open_] });
      expect(await store().webhookDeliveries(root.id)).toEqual([]);
      await store().ingest({ patch: [{ id: root.id, trace_id: root.id, dotted_order: root.dotted_order, end_time: END }] });
      const [d, ...more] = await store().webhookDeliveries(root.id);
      expect(more).toEqual([]);
      expect(d).toMatchObject({ run_id: root.id, url: HOOK, status: "pending", attempts: [], claimed_until: null, finished_at: null });
      expect(Date.parse(d!.created_at)).not.toBeNaN();
      for (const id of [child.id, plain.id, open_.id]) expect(await store().webhookDeliveries(id)).toEqual([]);
      expect(await store().pendingWebhooks()).toMatchObject({ count: 1 });
    });

    it("writes the delivery once per run when its post and patch race and when it completes again", async () => {
      const runs = Array.from({ length: 20 }, () => asking({ end_time: END }));
      // Each run's post (already ended) and its patch arrive in separate ingests at the same moment, twice over.
      await Promise.all(
        runs.flatMap((r) => [
          store().ingest({ post: [r] }),
          store().ingest({ patch: [{ id: r.id, trace_id: r.id, dotted_order: r.dotted_order, end_time: END, outputs: { a: 1 } }] }),
          store().ingest({ patch: [{ id: r.id, trace_id: r.id, dotted_order: r.dotted_order, end_time: "2026-11-22T10:15:03.000000Z" }] }),
        ]),
      );
      for (const r of runs) expect((await store().webhookDeliveries(r.id)).length, r.id).toBe(1);
      expect(await store().pendingWebhooks()).toMatchObject({ count: 20 });
      expect((await claimAll(store())).map((c) => c.run_id).sort()).toEqual(runs.map((r) => r.id).sort());
    });

    it("writes the delivery when the end-time patch came before the post, and none for a child whose patch came first", async () => {
      // PATCH /runs/{id} carries only what changed: no parent, no metadata. The run is known to be a root that
      // names a webhook only when its post arrives, and it is complete from then on.
      const root = asking();
      await store().ingest({ patch: [{ id: root.id, end_time: END, outputs: { a: 1 } }] });
      expect(await store().webhookDeliveries(root.id)).toEqual([]);
      expect((await store().ingest({ post: [root] })).completedRoots).toEqual([root.id]);
      expect(await store().webhookDeliveries(root.id)).toMatchObject([{ run_id: root.id, url: HOOK, status: "pending" }]);
      // A post arriving again completes nothing more.
      expect((await store().ingest({ post: [root] })).completedRoots).toEqual([]);
      // A child's patch that names the webhook (metadata its parent passed on) but not its parent is no root's completion.
      const child = childRun(asking(), { extra: { metadata: { webhook: HOOK } } });
      const childPatch = { id: child.id, end_time: END, extra: { metadata: { webhook: HOOK } } };
      expect((await store().ingest({ patch: [childPatch] })).completedRoots).toEqual([]);
      expect((await store().ingest({ post: [child] })).completedRoots).toEqual([]);
      expect(await store().webhookDeliveries(child.id)).toEqual([]);
      expect(await store().pendingWebhooks()).toMatchObject({ count: 1 });
    });

    it("stores a run whose webhook URL has U+0000 in its path, and its delivery to where URL parsing sends it", async () => {
      const hook = "https://hooks.example.com/a\u0000b";
      const sent = new URL(hook).href;
      // Posted ended (one statement for new runs), and completed by a patch (the merge).
      const [a, b] = [
        rootRun({ extra: { metadata: { webhook: hook } }, end_time: END }),
        rootRun({ extra: { metadata: { webhook: hook } } }),
      ];
      await store().ingest({ post: [a] });
      await store().ingest({ post: [b] });
      await store().ingest({ patch: [{ id: b.id, end_time: END }] });
      for (const r of [a, b]) {
        expect(await store().getRun(r.id), r.id).toMatchObject({ extra: { metadata: { webhook: hook } } });
        const [d] = await store().webhookDeliveries(r.id);
        expect(new URL(d!.url).href, r.id).toBe(sent);
      }
    });

    it("gives concurrent claimers disjoint deliveries, and a claimed delivery to no one else while its lease runs", async () => {
      const runs = Array.from({ length: 12 }, () => asking({ end_time: END }));
      await store().ingest({ post: runs });
      const claims = await Promise.all(Array.from({ length: 4 }, () => store().claimWebhooks(5, 60_000)));
      const ids = claims.flat().map((c) => c.run_id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(runs.map((r) => r.id).sort());
      expect(await claimAll(store())).toEqual([]);
      const [d] = await store().webhookDeliveries(runs[0]!.id);
      expect(Date.parse(d!.claimed_until!)).toBeGreaterThan(Date.now() + 30_000);
    });

    it("lets a delivery whose claimer died be claimed again once the lease ends; the late claimer's failure does not undo the new claim", async () => {
      const r = asking({ end_time: END });
      await store().ingest({ post: [r] });
      const [first] = await store().claimWebhooks(10, 300);
      expect(first).toMatchObject({ run_id: r.id, url: HOOK, attempts: 0 });
      expect(await store().claimWebhooks(10, 300)).toEqual([]);
      await sleep(450);
      const [second] = await store().claimWebhooks(10, 60_000);
      expect(second).toMatchObject({ run_id: r.id, attempts: 0 });
      expect(second!.claim).not.toBe(first!.claim);
      // The first claimer was only slow: its attempt is kept, but its "failed" does not end the delivery the second now holds.
      expect(await store().recordWebhookAttempt(first!, attempt({ error: "no answer within 1000 ms" }), { status: "failed" })).toBe(true);
      let [d] = await store().webhookDeliveries(r.id);
      expect(d).toMatchObject({ status: "pending", attempts: [{ error: "no answer within 1000 ms" }] });
      expect(d!.claimed_until).not.toBeNull();
      await store().recordWebhookAttempt(second!, attempt({ status_code: 200 }), { status: "delivered" });
      [d] = await store().webhookDeliveries(r.id);
      expect(d).toMatchObject({ status: "delivered", claimed_until: null, next_attempt_at: null });
      expect(d!.attempts.map((a) => a.status_code ?? a.error)).toEqual(["no answer within 1000 ms", 200]);
      expect(Date.parse(d!.finished_at!)).not.toBeNaN();
    });

    it("keeps every attempt with its time, status or error and duration; a retry is due only after its delay; a final failure ends it", async () => {
      const r = asking({ end_time: END });
      await store().ingest({ post: [r] });
      let [c] = await claimAll(store());
      const a1 = attempt({ status_code: 503 });
      await store().recordWebhookAttempt(c!, a1, { status: "pending", retryInMs: 400 });
      let [d] = await store().webhookDeliveries(r.id);
      expect(d).toMatchObject({ status: "pending", claimed_until: null, attempts: [a1] });
      expect(Date.parse(d!.next_attempt_at!)).toBeGreaterThan(Date.now() + 100);
      expect(await claimAll(store())).toEqual([]); // not due yet
      expect((await store().pendingWebhooks()).next_due_at).toBe(d!.next_attempt_at);
      await sleep(500);
      [c] = await claimAll(store());
      expect(c).toMatchObject({ run_id: r.id, attempts: 1 });
      const a2 = attempt({ error: "connect ECONNREFUSED 127.0.0.1:9" });
      await store().recordWebhookAttempt(c!, a2, { status: "failed" });
      [d] = await store().webhookDeliveries(r.id);
      expect(d).toMatchObject({ status: "failed", attempts: [a1, a2], next_attempt_at: null, claimed_until: null });
      expect(await claimAll(store())).toEqual([]);
      expect(await store().pendingWebhooks()).toEqual({ count: 0, next_due_at: null });
      // A finished delivery stays finished: a late attempt is kept, its outcome is not applied.
      await store().recordWebhookAttempt(c!, attempt({ status_code: 200 }), { status: "delivered" });
      expect((await store().webhookDeliveries(r.id))[0]).toMatchObject({ status: "failed" });
    });
  });

  describe("the webhook outbox when runs go", () => {
    const store = eachStore(open, { webhookOutbox: true });
    it("removes a run's delivery with the run, when its project is deleted or its trace pruned", async () => {
      const kept = asking({ end_time: END, session_name: "kept" });
      const dropped = asking({ end_time: END, session_name: "dropped" });
      const old = asking({ end_time: "2026-01-05T10:00:01.000000Z", start_time: "2026-01-05T10:00:00.000000Z", session_name: "kept" });
      await store().ingest({ post: [kept, dropped, old] });
      await store().deleteProject("dropped");
      await store().pruneTraces(new Date("2026-06-01T00:00:00Z"));
      expect(await store().webhookDeliveries(dropped.id)).toEqual([]);
      expect(await store().webhookDeliveries(old.id)).toEqual([]);
      expect(await store().webhookDeliveries(kept.id)).toHaveLength(1);
      expect(await store().pendingWebhooks()).toMatchObject({ count: 1 });
    });
  });

  describe("without webhooks configured", () => {
    const store = eachStore(open);
    it("writes no outbox rows", async () => {
      const r = asking({ end_time: END });
      await store().ingest({ post: [r] });
      expect(store().writesWebhookOutbox).toBe(false);
      expect(await store().webhookDeliveries(r.id)).toEqual([]);
      expect(await store().pendingWebhooks()).toEqual({ count: 0, next_due_at: null });
    });
  });
}
