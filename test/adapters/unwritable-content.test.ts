/**
 * Structured content an adapter keeps as JSON text (Converse `toolResult.json`,
 * Gemini `functionResponse.response` and its unknown parts) may hold what JSON
 * cannot write when it comes from code, not a log: a cycle, a BigInt, nesting
 * deeper than the stack. The adapter contract is that only NormalizeError leaves
 * an adapter, located at the value.
 */
import { describe, expect, it } from "vitest";
import { bedrockConverse, gemini } from "../../adapters/index.js";
import { NormalizeError } from "../../src/errors.js";

function unwritable(): [string, unknown][] {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  let deep: unknown = { leaf: true };
  for (let i = 0; i < 20_000; i++) deep = { d: deep };
  return [
    ["a cycle", cycle],
    ["a BigInt", { n: 10n }],
    ["20,000-deep nesting", deep],
  ];
}

function locOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(NormalizeError);
    return (err as NormalizeError).issues[0]!.loc;
  }
  throw new Error("expected a NormalizeError");
}

describe("content JSON cannot write is a NormalizeError at the value", () => {
  for (const [what, value] of unwritable()) {
    it(`Converse toolResult json holding ${what}`, () => {
      const req = { modelId: "m", messages: [{ role: "user", content: [{ toolResult: { toolUseId: "t", content: [{ json: value }] } }] }] };
      expect(locOf(() => bedrockConverse.normalizeRequest(req))).toEqual(["messages", 0, "content", 0, "toolResult", "content", 0, "json"]);
    });
    it(`Gemini functionResponse.response holding ${what}`, () => {
      const req = {
        model: "gemini-2.5-flash",
        contents: [{ role: "user", parts: [{ functionResponse: { name: "f", response: value } }] }],
      };
      expect(locOf(() => gemini.normalizeRequest(req))).toEqual(["contents", 0, "parts", 0, "functionResponse", "response"]);
    });
  }
});
