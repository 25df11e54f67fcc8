/**
 * A run part may carry a member named `__proto__` (JSON.parse makes it an own
 * key). The collector assembles a run from its parts; assigning that member
 * would give the run a prototype whose fields the checks and the store read as
 * the run's own. Over loopback with the real collector: the stored run holds
 * only what the client sent as fields.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { runRecord, startCollector, type Running } from "../helpers/collector.js";

let c: Running;
beforeAll(async () => {
  c = await startCollector();
});
afterAll(async () => {
  await c.close();
});

it("a `__proto__` member of a run part lends the run none of its fields", async () => {
  const run = runRecord({ session_name: "proto-fields", name: "own-name" });
  const { inputs, ...main } = run;
  // Written by hand: JSON.stringify of an object literal cannot produce an own `__proto__` member.
  const mainText = JSON.stringify(main).replace(
    /^\{/,
    '{"__proto__":{"end_time":"2026-11-22T10:16:00Z","error":"injected","tags":["injected"]},',
  );
  const fd = new FormData();
  fd.append(`post.${run.id as string}`, new Blob([mainText], { type: "application/json" }));
  fd.append(`post.${run.id as string}.inputs`, new Blob([JSON.stringify(inputs)], { type: "application/json" }));
  const res = await fetch(c.url + "/runs/multipart", { method: "POST", body: fd });
  expect(res.status).toBeLessThan(300);
  const stored = await c.collector.store.getRun(run.id as string);
  expect(stored).toBeDefined();
  expect(stored!.name).toBe("own-name");
  expect(stored!.inputs).toEqual(inputs);
  expect(stored!.end_time ?? null).toBeNull();
  expect(stored!.error ?? null).toBeNull();
  expect(stored!.tags ?? []).not.toContain("injected");
  expect(await c.collector.store.countRuns("proto-fields")).toBe(1);
});
