/**
 * An update with deferred work (a wrapper's end of call) merged into its run's
 * queued create: the create was copied when it was handed over, so delivery
 * copies only the update's fields, within what the create's copy left of the
 * run's byte budget, and the run delivered is what copying it whole gives.
 */
import { describe, expect, it } from "vitest";
import { encodeRunBytes } from "../../src/ingest/multipart.js";
import { encodedOp, finalize, mergeOps, patchOp, postOp } from "../../src/ingest/ops.js";
import { makeSafe } from "../../src/run/safe.js";
import { makeRun } from "../helpers/runs.js";

describe("an update merged into its queued create", () => {
  it("is copied at delivery, after its deferred work, and the create's copy is not made again", () => {
    const run = makeRun("merge", 300);
    const post = postOp(run);
    const inputsCopy = post.run.inputs;
    const outputs: Record<string, unknown> = { messages: [{ role: "assistant", content: [{ type: "text", text: "hi" }] }] };
    const patch = patchOp(run.id, { end_time: "2026-11-22T10:16:00.000000Z", outputs, extra: { metadata: { a: 1 } } }, undefined, () => {
      outputs.usage = { input_tokens: 3 };
    });
    mergeOps(post, patch);
    expect(post.raw).toBe(true);
    finalize(post);
    expect(post.raw).toBe(false);
    expect(post.run.inputs).toBe(inputsCopy);
    expect(post.run.outputs).not.toBe(outputs);
    expect(post.run.outputs).toEqual({ ...outputs, usage: { input_tokens: 3 } });
    // Later changes to the caller's objects are not seen.
    (outputs.messages as unknown[]).push("late");
    expect((post.run.outputs as { messages: unknown[] }).messages).toHaveLength(1);
  });

  it("is kept as it is when it and its create are the producer's own and plain JSON, without the undefined fields", () => {
    const run = makeRun("owned", 300);
    const same = structuredClone(run);
    const post = postOp(run, undefined, undefined, true);
    expect(post.run).toBe(run);
    const outputs: Record<string, unknown> = { messages: [{ role: "assistant", content: [{ type: "text", text: "hi" }] }] };
    const fields = { end_time: "2026-11-22T10:16:00.000000Z", outputs, error: undefined, extra: { metadata: { a: 1 } } };
    mergeOps(
      post,
      patchOp(run.id, fields, undefined, () => void (outputs.usage = { input_tokens: 3 }), undefined, true),
    );
    expect(post.rawOwned).toBe(true);
    // The same run and update as the caller's (copied at delivery), for comparison.
    const copied = postOp(same);
    const theirs = structuredClone(outputs);
    mergeOps(
      copied,
      patchOp(run.id, { ...fields, outputs: theirs }, undefined, () => void (theirs.usage = { input_tokens: 3 })),
    );
    finalize(post);
    finalize(copied);
    expect(post.run.outputs).toBe(outputs);
    expect(post.run.outputs).toEqual({ ...outputs, usage: { input_tokens: 3 } });
    expect("error" in post.run).toBe(false);
    // Checked, the fields count what copying them would have.
    expect(post.safeBytes).toBe(copied.safeBytes);
    expect(post.run).toEqual(copied.run);
    expect(Object.keys(post.run)).toEqual(Object.keys(copied.run));
  });

  it("copies an owned update that is not plain JSON, and one merged with an update that is not owned", () => {
    const run = makeRun("owned", 300);
    const when = new Date(Date.UTC(2026, 10, 22));
    const post = postOp(run, undefined, undefined, true);
    mergeOps(
      post,
      patchOp(run.id, { outputs: { when } }, undefined, () => {}, undefined, true),
    );
    finalize(post);
    expect(post.run.outputs).toEqual({ when: when.toISOString() });
    const host = { text: "host" };
    const other = postOp(run, undefined, undefined, true);
    mergeOps(
      other,
      patchOp(run.id, { outputs: { mine: 1 } }, undefined, () => {}, undefined, true),
    );
    mergeOps(
      other,
      patchOp(run.id, { error: "failed", extra: { metadata: { host } } }, undefined, () => {}),
    );
    expect(other.rawOwned).toBeUndefined();
    finalize(other);
    host.text = "changed";
    expect((other.run.extra as { metadata: { host: { text: string } } }).metadata.host.text).toBe("host");
  });

  it("delivers the same run as copying the merged run whole", () => {
    const run = makeRun("merge", 500);
    const cyclic: Record<string, unknown> = {
      when: new Date(Date.UTC(2026, 10, 22)),
      big: 12345678901234567890n,
      map: new Map([["k", 1]]),
    };
    cyclic.self = cyclic;
    const fields = {
      end_time: "2026-11-22T10:16:00.000000Z",
      outputs: { value: cyclic, text: "é ✓" },
      error: undefined,
      events: [{ name: "new_token", time: "2026-11-22T10:15:30.000000Z" }],
      extra: { metadata: { k: ["v"] } },
    };
    const post = postOp(run);
    mergeOps(
      post,
      patchOp(run.id, fields, undefined, () => {}),
    );
    finalize(post);
    const whole = makeSafe(
      Object.assign(
        {},
        run,
        { end_time: fields.end_time, outputs: fields.outputs, events: fields.events, extra: fields.extra },
        { id: run.id },
      ),
    ).value;
    expect(post.run).toEqual(whole);
    expect(Object.keys(post.run)).toEqual(Object.keys(whole as object));
  });

  it.each([
    ["queued as an object", false],
    ["held encoded", true],
  ])("copies the update's fields within what the create's copy left of the byte budget (create %s)", (_how, encoded) => {
    const limits = { maxBytes: 4000 };
    const run = Object.assign(
      makeRun("merge", 0),
      { inputs: { text: "i".repeat(3000) } },
      encoded ? { end_time: "2026-11-22T10:15:30.000000Z" } : {},
    );
    const post = encoded ? encodedOp(postOp(run, undefined, limits), encodeRunBytes) : postOp(run, undefined, limits);
    if (encoded) expect(post.encoded).toBeDefined();
    mergeOps(
      post,
      patchOp(run.id, { end_time: "2026-11-22T10:16:00.000000Z", outputs: { text: "o".repeat(3000) } }, undefined, () => {}, limits),
    );
    finalize(post, limits);
    const text = (post.run.outputs as { text: string }).text;
    expect(text).toMatch(/…\[truncated \d+ chars\]$/);
    expect(JSON.stringify(post.run).length).toBeLessThan(4000 + 200);
    expect((post.run.inputs as { text: string }).text).toBe("i".repeat(3000));
  });
});
