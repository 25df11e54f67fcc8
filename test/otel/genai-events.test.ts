/** GenAI log events to native messages (adapters/otel-genai/events.ts), and the log-record processor's bounds. */
import { describe, expect, it } from "vitest";
import { eventMessages, otelGenAi } from "../../adapters/otel-genai/index.js";
import type { LogRecordLike } from "../../adapters/spans.js";
import type { Issue } from "../../src/errors.js";
import { TraceLogRecordProcessor } from "../../src/otel/index.js";

const rec = (eventName: string, body: unknown, attributes: Record<string, unknown> = {}): LogRecordLike => ({
  eventName,
  body,
  attributes,
});

describe("GenAI log events", () => {
  it("maps each event to the message the span attributes would give: tool calls, tool results by id, choices by index", () => {
    const issues: Issue[] = [];
    const r = eventMessages(
      [
        rec("gen_ai.system.message", { content: "Be terse." }),
        rec("gen_ai.user.message", { content: [{ type: "text", text: "Weather?" }] }),
        rec("gen_ai.assistant.message", {
          tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
        }),
        rec("gen_ai.tool.message", { id: "c1", content: "18C" }),
        rec("gen_ai.choice", { index: 1, finish_reason: "stop", message: { content: "second" } }),
        rec("gen_ai.choice", { index: 0, finish_reason: "stop", message: { content: "first" } }),
      ],
      issues,
    );
    expect(issues).toEqual([]);
    expect(r.captured).toBe(true);
    expect(r.input).toEqual([
      { role: "system", content: [{ type: "text", text: "Be terse." }] },
      { role: "user", content: [{ type: "text", text: "Weather?" }] },
      { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "get_weather", args: { city: "Paris" } }] },
      { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "18C" }] },
    ]);
    expect(r.output!.map((m) => m.content)).toEqual([[{ type: "text", text: "first" }], [{ type: "text", text: "second" }]]);
  });

  it("makes no messages from records without content (capture off), and says so", () => {
    const r = eventMessages([rec("gen_ai.user.message", {}), rec("gen_ai.choice", { index: 0, finish_reason: "stop", message: {} })], []);
    expect(r).toEqual({ captured: false });
  });

  it("keeps every record that reads when one does not, with the issue located", () => {
    const issues: Issue[] = [];
    const r = eventMessages(
      [rec("gen_ai.user.message", { content: 42 }), rec("gen_ai.choice", { index: 0, message: { content: "ok" } })],
      issues,
    );
    expect(issues).toEqual([expect.objectContaining({ loc: ["logs", 0, "gen_ai.user.message", "body", "content"] })]);
    expect(r.output).toEqual([{ role: "assistant", content: [{ type: "text", text: "ok" }] }]);
  });

  it("joins a streamed Responses call's per-item records into one reply, and its structured parts read as on a span", () => {
    const details = "gen_ai.client.inference.operation.details";
    const r = eventMessages(
      [
        rec(details, null, { "gen_ai.input.messages": [{ role: "user", parts: [{ type: "text", content: "Hi" }] }] }),
        rec(details, null, {
          "gen_ai.output.messages": [{ role: "assistant", parts: [{ type: "text", content: "Hello" }], finish_reason: "stop" }],
        }),
        rec(details, null, {
          "gen_ai.output.messages": [
            {
              role: "assistant",
              parts: [{ type: "tool_call", id: "fc_1", call_id: "call_1", name: "f", arguments: "{}" }],
              finish_reason: "tool_call",
            },
          ],
        }),
      ],
      [],
    );
    expect(r.input).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
    expect(r.output).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "Hello" },
          { type: "tool_call", id: "call_1", name: "f", args: {}, extras: { item_id: "fc_1" } },
        ],
        extras: { finish_reason: "tool_call" },
      },
    ]);
  });

  it("fills only the side the span lacks: messages on the span win", () => {
    const r = otelGenAi.read({
      name: "chat",
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "span" }] }]),
      },
      events: [],
      logs: [rec("gen_ai.user.message", { content: "from logs" }), rec("gen_ai.choice", { index: 0, message: { content: "logs" } })],
    });
    expect(r.input_messages).toEqual([{ role: "user", content: [{ type: "text", text: "from logs" }] }]);
    expect(r.output_messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "span" }] }]);
  });
});

describe("TraceLogRecordProcessor", () => {
  const emit = (p: TraceLogRecordProcessor, spanId: string, eventName = "gen_ai.user.message") =>
    p.onEmit({
      spanContext: { traceId: "a".repeat(32), spanId, traceFlags: 1 },
      eventName,
      attributes: {},
      body: { content: "x" },
      hrTime: [1, 0],
    } as never);

  it("holds at most maxRecords, letting the oldest spans' records go first, and counts them", () => {
    const p = new TraceLogRecordProcessor({ maxRecords: 2 });
    emit(p, "1".repeat(16));
    emit(p, "2".repeat(16));
    emit(p, "3".repeat(16));
    expect(p.stats).toEqual({ held: 2, joined: 0, expired: 1 });
    expect(p.take("a".repeat(32), "1".repeat(16))).toBeUndefined();
    expect(p.take("a".repeat(32), "3".repeat(16))).toEqual([
      { eventName: "gen_ai.user.message", body: { content: "x" }, attributes: {}, timeUs: 1_000_000 },
    ]);
    expect(p.stats).toEqual({ held: 1, joined: 1, expired: 1 });
  });

  it("holds only GenAI records emitted inside a span, and rejects a bound that is not positive, naming it", () => {
    const p = new TraceLogRecordProcessor();
    emit(p, "1".repeat(16), "app.audit");
    p.onEmit({ eventName: "gen_ai.user.message", attributes: {}, body: {}, hrTime: [1, 0] } as never);
    expect(p.stats.held).toBe(0);
    expect(() => new TraceLogRecordProcessor({ maxAgeMs: 0 })).toThrow(/maxAgeMs/);
  });
});
