/**
 * A field named `__proto__` is data like any other: JSON.parse makes it an own
 * key, and DESIGN's "nothing a vendor sent is dropped" keeps it in `extras`.
 * Assigned with `o[k] = v` it would instead replace the object's prototype:
 * the field vanishes, its members show through for-in as if they were fields,
 * and a path of attribute names could reach Object.prototype itself.
 */
import { afterEach, describe, expect, it } from "vitest";
import { normalize } from "../../src/normalize.js";
import { unflatten } from "../../adapters/common/flat.js";
import { openInference } from "../../adapters/openinference/index.js";
import { attributes } from "../../src/otlp/plain.js";
import { put, putAll } from "../../src/internal/obj.js";

/** Every object in `v` is a plain object or an array with its own prototype untouched. */
function prototypesIntact(v: unknown, path = "$"): string[] {
  if (typeof v !== "object" || v === null) return [];
  const proto = Object.getPrototypeOf(v) as unknown;
  const bad = proto === Object.prototype || proto === Array.prototype || proto === null ? [] : [path];
  for (const k of Object.keys(v)) bad.push(...prototypesIntact((v as Record<string, unknown>)[k], `${path}.${k}`));
  return bad;
}

/** The markers kept as `"__proto__":{"m":"<marker>"}` in the output's JSON. */
function keptMarkers(out: unknown): string[] {
  return [...JSON.stringify(out).matchAll(/"__proto__":\{"m":"([a-z-]+)"\}/g)].map((m) => m[1]!).sort();
}

const mark = (m: string) => `"__proto__":{"m":"${m}"}`;

afterEach(() => {
  // A test that reached Object.prototype would leave this behind for every later test.
  expect(Object.hasOwn(Object.prototype, "polluted")).toBe(false);
});

describe("a `__proto__` field in a vendor record is kept as a field", () => {
  const cases: [string, string, string[]][] = [
    [
      "OpenAI chat: a message, a choice and usage",
      `{"request":{"model":"gpt-4o","messages":[{"role":"user","content":"hi",${mark("in-message")}}]},
        "response":{"id":"c","object":"chat.completion","model":"gpt-4o",
          "choices":[{"index":0,"finish_reason":"stop",${mark("choice")},"message":{"role":"assistant","content":"yo"}}],
          "usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,${mark("usage")}}}}`,
      ["choice", "in-message", "usage"],
    ],
    [
      "Anthropic messages: blocks, the response and usage",
      `{"request":{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hi",${mark("in-block")}}]}]},
        "response":{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5",${mark("response")},
          "content":[{"type":"text","text":"yo",${mark("out-block")}}],"stop_reason":"end_turn",
          "usage":{"input_tokens":1,"output_tokens":1,${mark("usage")}}}}`,
      ["in-block", "out-block", "response", "usage"],
    ],
    [
      "Gemini: a part and a candidate",
      `{"request":{"model":"gemini-2.0-flash","contents":[{"role":"user","parts":[{"text":"hi",${mark("part")}}]}]},
        "response":{"candidates":[{${mark("candidate")},"content":{"role":"model","parts":[{"text":"yo"}]},"finishReason":"STOP"}],
          "usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}}`,
      ["candidate", "part"],
    ],
  ];
  it.each(cases)("%s", (_name, text, markers) => {
    const out = normalize(JSON.parse(text));
    expect(keptMarkers(out)).toEqual(markers);
    expect(prototypesIntact(out)).toEqual([]);
  });

  it("a chunk's `__proto__` field is folded into the streamed message like any other field", () => {
    const chunk = (delta: string, extra = "") =>
      JSON.parse(
        `{"id":"c","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"${delta}"${extra}},"finish_reason":null}]}`,
      ) as unknown;
    const out = normalize({
      request: { model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hi" }] },
      response: [chunk("y", `,${mark("delta")}`), chunk("o")],
    });
    expect(JSON.stringify(out.outputs)).toContain('"text":"yo"');
    expect(keptMarkers(out)).toEqual(["delta"]);
    expect(prototypesIntact(out)).toEqual([]);
  });
});

describe("flattened span attributes never reach a prototype", () => {
  it("unflatten keeps a `__proto__` segment as a field and leaves Object.prototype alone", () => {
    const list = unflatten({ "p.0.__proto__.polluted": "yes", "p.0.role": "user" }, "p");
    expect(JSON.stringify(list)).toBe('[{"__proto__":{"polluted":"yes"},"role":"user"}]');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(prototypesIntact(list)).toEqual([]);
  });

  it("an OpenInference span with such an attribute still reads its messages", () => {
    const result = openInference.read({
      attributes: {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "hi",
        "llm.input_messages.0.__proto__.polluted": "yes",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "again",
        "llm.input_messages.1.message.__proto__.polluted": "yes",
      },
      events: [],
    } as never);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(result.input_messages)).toContain('"text":"hi"');
    expect(JSON.stringify(result.input_messages)).toContain('"text":"again"');
    expect(prototypesIntact(result)).toEqual([]);
  });

  it("OTLP attributes named `__proto__` are an attribute, not the map's prototype", () => {
    const attrs = attributes([
      { key: "__proto__", value: { kvlistValue: { values: [{ key: "gen_ai.system", value: { stringValue: "injected" } }] } } },
      { key: "service.name", value: { stringValue: "svc" } },
    ]);
    expect(Object.getPrototypeOf(attrs)).toBe(Object.prototype);
    expect(attrs["gen_ai.system"]).toBeUndefined();
    expect(Object.keys(attrs)).toEqual(["__proto__", "service.name"]);
  });
});

describe("put and putAll", () => {
  it("write a `__proto__` key as an own enumerable field and every other key as assignment does", () => {
    const o: Record<string, unknown> = {};
    put(o, "__proto__", { a: 1 });
    put(o, "b", 2);
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
    expect(JSON.stringify(o)).toBe('{"__proto__":{"a":1},"b":2}');
    const target: Record<string, unknown> = { b: 1 };
    putAll(target, JSON.parse('{"__proto__":{"x":1},"b":3,"c":4}') as Record<string, unknown>);
    expect(JSON.stringify(target)).toBe('{"b":3,"__proto__":{"x":1},"c":4}');
    expect((target as { x?: unknown }).x).toBeUndefined();
  });
});
