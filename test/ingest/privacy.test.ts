import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { applyPrivacy, Sampler, samplingRateFrom, traceFraction } from "../../src/ingest/privacy.js";

describe("Sampler", () => {
  it("keeps or drops whole traces, at about the rate asked, the same way every time", () => {
    const s = new Sampler(0.25);
    let kept = 0;
    for (let t = 0; t < 4000; t++) {
      const trace = randomUUID();
      const child = randomUUID();
      const decisions = [
        s.keep({ id: trace, trace_id: trace }),
        s.keep({ id: child, trace_id: trace, parent_run_id: trace }),
        s.keep({ id: child }),
        s.keep({ id: trace, end_time: "2026-01-01T00:00:00Z" }),
      ];
      expect(new Set(decisions).size).toBe(1); // a trace is kept or dropped whole, patches included
      if (decisions[0]) kept++;
      expect(new Sampler(0.25).keep({ id: trace, trace_id: trace })).toBe(decisions[0]); // another process decides alike
    }
    expect(kept / 4000).toBeGreaterThan(0.2);
    expect(kept / 4000).toBeLessThan(0.3);
  });

  it("keeps everything at 1 and nothing at 0, and forgets a dropped run after its last update", () => {
    const id = randomUUID();
    expect(new Sampler(1).keep({ id, trace_id: id })).toBe(true);
    const none = new Sampler(0);
    expect(none.keep({ id, trace_id: id })).toBe(false);
    expect(none.keep({ id, end_time: "2026-01-01T00:00:00Z" })).toBe(false);
    expect(none.keep({ id })).toBe(true); // forgotten: an unknown patch is sent, never silently lost
  });

  it("bounds what it remembers", () => {
    const s = new Sampler(0, 10);
    const ids = Array.from({ length: 20 }, () => randomUUID());
    for (const id of ids) s.keep({ id, trace_id: id });
    expect(s.keep({ id: ids[19]! })).toBe(false);
    expect(s.keep({ id: ids[0]! })).toBe(true);
  });

  it("spreads trace ids over [0, 1)", () => {
    const xs = Array.from({ length: 1000 }, () => traceFraction(randomUUID()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
  });

  it("reads TRACEPIPE_SAMPLING_RATE strictly", () => {
    expect(samplingRateFrom(undefined)).toBeUndefined();
    expect(samplingRateFrom("0.1")).toBe(0.1);
    expect(() => samplingRateFrom("half")).toThrow(/TRACEPIPE_SAMPLING_RATE/);
    expect(() => samplingRateFrom("2")).toThrow(/from 0 to 1/);
  });
});

describe("applyPrivacy", () => {
  const run = {
    id: "r1",
    name: "ChatOpenAI",
    start_time: "2026-01-01T00:00:00Z",
    inputs: { messages: [{ role: "user", content: [{ type: "text", text: "mail me at ada@example.com" }] }] },
    outputs: { messages: [{ role: "assistant", content: [{ type: "text", text: "ok ada@example.com" }] }] },
    error: "failed for ada@example.com",
    events: [{ name: "new_chunk", time: "2026-01-01T00:00:01Z", kwargs: { chunk: "ada@example.com" } }],
    extra: { metadata: { user: "ada@example.com" } },
  };
  const email = /[\w.]+@[\w.]+/g;

  it("masks every string outside the run's identity and timing, without changing the caller's object", () => {
    const before = JSON.stringify(run);
    const out = applyPrivacy(run, { mask: (s) => s.replace(email, "[email]") });
    expect(JSON.stringify(out)).not.toContain("ada@example.com");
    expect(JSON.stringify(out)).toContain("[email]");
    expect(out.start_time).toBe(run.start_time);
    expect(JSON.stringify(run)).toBe(before);
  });

  it("hides inputs and outputs, wholly or by function, and hides rather than leaks when a function throws", () => {
    expect(applyPrivacy(run, { hideInputs: true }).inputs).toEqual({});
    expect(applyPrivacy(run, { hideOutputs: (o) => ({ kept: Object.keys(o) }) }).outputs).toEqual({ kept: ["messages"] });
    const failing = applyPrivacy(run, {
      hideInputs: () => {
        throw new Error("boom");
      },
    });
    expect(JSON.stringify(failing.inputs)).not.toContain("ada@");
    const failingMask = applyPrivacy(run, {
      mask: () => {
        throw new Error("boom");
      },
    });
    expect(JSON.stringify(failingMask)).not.toContain("ada@");
  });
});
