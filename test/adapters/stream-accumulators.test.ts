/**
 * DESIGN "Streams": where the vendor's SDK accumulates a stream, that
 * accumulator defines what a stream cut after any event means. For recorded
 * streams and generated recorded-style ones, every prefix is folded by the
 * adapter and compared with the SDK accumulator's state at the same point,
 * read by the same adapter as a response: the fold must hold everything that
 * state holds (it may hold more, in extras). Gemini and Bedrock, whose SDKs do
 * not accumulate, are held to the rule that everything the events carried so
 * far is in the output or its extras.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import type { MessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { partialParse } from "@anthropic-ai/sdk/_vendor/partial-json-parser/parser";
import { openaiChat } from "../../adapters/openai-chat/index.js";
import { openaiResponses } from "../../adapters/openai-responses/index.js";
import { anthropicMessages } from "../../adapters/anthropic-messages/index.js";
import { gemini } from "../../adapters/gemini/index.js";
import { bedrockConverse } from "../../adapters/bedrock-converse/index.js";
import { expectValidNative } from "../helpers/native.js";
import type { Adapter } from "../../adapters/types.js";
import { fixture } from "../helpers/replay-server.js";
import { chatSnapshots, messageSnapshots, responseSnapshots } from "../helpers/sdk-accumulators.js";
import { chatStream, converseStream, geminiStream, messagesStream, protoSpelled, responsesStream } from "../helpers/recorded-style.js";

/** Where `ours` lacks something `theirs` has: a path and the two values, or undefined when it holds all of it. */
function missing(ours: unknown, theirs: unknown, path: string): string | undefined {
  if (theirs === undefined || theirs === null) return undefined;
  if (Array.isArray(theirs)) {
    if (!Array.isArray(ours) || ours.length !== theirs.length) return `${path}: ${JSON.stringify(ours)} vs ${JSON.stringify(theirs)}`;
    for (let i = 0; i < theirs.length; i++) {
      const m = missing(ours[i], theirs[i], `${path}[${i}]`);
      if (m) return m;
    }
    return undefined;
  }
  if (typeof theirs === "object") {
    if (ours === null || typeof ours !== "object") return `${path}: ${JSON.stringify(ours)} vs ${JSON.stringify(theirs)}`;
    const o = ours as Record<string, unknown>;
    const t = theirs as Record<string, unknown>;
    // A tool call cut mid-JSON: the SDK parses what it can, the fold keeps the exact text, which reads back to the same.
    const raw = (o.extras as Record<string, unknown> | undefined)?.raw_args;
    const args = typeof raw === "string" && "args" in t ? (partialParse(raw) as unknown) : o.args;
    for (const k in t) {
      const m = missing(k === "args" ? args : o[k], t[k], `${path}.${k}`);
      if (m) return m;
    }
    return undefined;
  }
  return ours === theirs ? undefined : `${path}: ${JSON.stringify(ours)} vs ${JSON.stringify(theirs)}`;
}

/** Each prefix folded by `adapter` holds what the SDK's state after its last event holds, read by the same adapter. */
function holdsEveryPrefix(
  adapter: Adapter,
  events: readonly unknown[],
  snapshots: readonly unknown[],
  asResponse: (s: unknown) => unknown = (s) => s,
): void {
  expect(snapshots).toHaveLength(events.length);
  const acc = adapter.createStreamAccumulator();
  for (let k = 0; k < events.length; k++) {
    acc.push(events[k]);
    const ours = acc.result();
    const theirs = adapter.normalizeResponse(asResponse(snapshots[k]));
    const gap =
      missing(ours.messages, theirs.messages, "messages") ?? missing(ours.usage_metadata, theirs.usage_metadata, "usage_metadata");
    if (gap) throw new Error(`after event ${k} (${JSON.stringify(events[k])}): ${gap}`);
    expect(adapter.normalizeStream(events.slice(0, k + 1))).toEqual(ours);
  }
}

/** A ChatCompletionStream snapshot is a completion whose `object` still names the chunks: read without it. */
const chatCompletion = (s: unknown) => {
  const { object: _object, ...completion } = s as Record<string, unknown>;
  return completion;
};

describe("OpenAI chat streams fold as openai-node's ChatCompletionStream accumulates them", () => {
  it("openai-stream.json and its usage chunk, cut after every chunk", async () => {
    const chunks = [...fixture("openai-stream.json"), fixture("openai-stream-usage-chunk.json")] as ChatCompletionChunk[];
    holdsEveryPrefix(openaiChat, chunks, await chatSnapshots(chunks), chatCompletion);
  });

  it("recorded-style streams of text, refusals and tool calls, cut after every chunk", async () => {
    await fc.assert(
      fc.asyncProperty(chatStream, async (chunks) => holdsEveryPrefix(openaiChat, chunks, await chatSnapshots(chunks), chatCompletion)),
      { numRuns: 40 },
    );
  });
});

describe("Anthropic message streams fold as the SDK's MessageStream accumulates them", () => {
  it.each(["anthropic-stream.json", "anthropic-tool-use-stream.json"])("%s, cut after every event", async (name) => {
    const events = fixture(name) as MessageStreamEvent[];
    holdsEveryPrefix(anthropicMessages, events, await messageSnapshots(events));
  });

  it("recorded-style streams of text, thinking and tool use, cut after every event", async () => {
    await fc.assert(
      fc.asyncProperty(messagesStream, async (events) => holdsEveryPrefix(anthropicMessages, events, await messageSnapshots(events))),
      { numRuns: 40 },
    );
  });
});

describe("Responses streams fold as openai-node's ResponseAccumulator accumulates them", () => {
  it("openai-response-stream.json, cut after every event", () => {
    const events = fixture("openai-response-stream.json") as ResponseStreamEvent[];
    holdsEveryPrefix(openaiResponses, events, responseSnapshots(events));
  });

  it("recorded-style streams of messages, citations, reasoning, function, MCP and code interpreter calls, cut after every event", () => {
    fc.assert(
      fc.property(responsesStream, (events) => holdsEveryPrefix(openaiResponses, events, responseSnapshots(events))),
      { numRuns: 150 },
    );
  });
});

/** Every string and number in `v` (the keys in `skip` and their values left out). */
function leaves(v: unknown, skip: ReadonlySet<string>, out: (string | number)[] = []): (string | number)[] {
  if (typeof v === "string" || typeof v === "number") out.push(v);
  else if (Array.isArray(v)) for (const e of v) leaves(e, skip, out);
  else if (v !== null && typeof v === "object") for (const [k, e] of Object.entries(v)) if (!skip.has(k)) leaves(e, skip, out);
  return out;
}

/** Each string the events carried is inside some string of the result (deltas are joined), each number is one of its numbers. */
function everythingKept(result: unknown, carried: readonly (string | number)[], at: string): void {
  const kept = leaves(result, new Set());
  const strings = kept.filter((x): x is string => typeof x === "string");
  for (const x of carried) {
    const found = typeof x === "number" ? kept.includes(x) : strings.some((s) => s.includes(x));
    if (!found) throw new Error(`${at}: ${JSON.stringify(x)} is not in ${JSON.stringify(result)}`);
  }
}

describe("Gemini streams: everything the chunks so far carried is in the output or its extras", () => {
  // The role is mapped (model -> assistant); usage is cumulative, so only the latest chunk's counts stand.
  const skip = new Set(["role", "usageMetadata", "usage_metadata"]);
  it("recorded-style streams in either JSON spelling, cut after every chunk", () => {
    fc.assert(
      fc.property(geminiStream, fc.boolean(), (chunks, proto) => {
        const events = proto ? (protoSpelled(chunks) as unknown[]) : chunks;
        const acc = gemini.createStreamAccumulator();
        events.forEach((e, k) => {
          acc.push(e);
          const r = acc.result();
          everythingKept(r, [...leaves(events.slice(0, k + 1), skip), ...leaves(chunks[k]!.usageMetadata, skip)], `after chunk ${k}`);
          expectValidNative(r.messages);
        });
      }),
      { numRuns: 150 },
    );
  });
});

describe("Bedrock ConverseStream: everything the events so far carried is in the output or its extras", () => {
  // Positions and the role are structure, not content; tool input arrives as JSON text in pieces, checked whole below.
  const skip = new Set(["role", "contentBlockIndex", "input"]);
  it("recorded-style streams with unknown union members, cut after every event", () => {
    fc.assert(
      fc.property(converseStream, (events) => {
        const acc = bedrockConverse.createStreamAccumulator();
        events.forEach((e, k) => {
          acc.push(e);
          const r = acc.result();
          everythingKept(r, leaves(events.slice(0, k + 1), skip), `after event ${k}`);
          expectValidNative(r.messages);
          // A tool's input so far: parsed into args when it is whole JSON ("" is no input), else kept verbatim.
          const inputs = new Map<number, string>();
          for (const ev of events.slice(0, k + 1)) {
            const d = (ev as { contentBlockDelta?: { contentBlockIndex: number; delta: { toolUse?: { input: string } } } })
              .contentBlockDelta;
            if (d?.delta.toolUse) inputs.set(d.contentBlockIndex, (inputs.get(d.contentBlockIndex) ?? "") + d.delta.toolUse.input);
          }
          const calls = r.messages[0]!.content.filter((b) => b.type === "tool_call");
          for (const text of inputs.values()) {
            let parsed: unknown;
            try {
              parsed = text === "" ? {} : JSON.parse(text);
            } catch {
              parsed = undefined;
            }
            expect(
              calls.some((c) => (parsed === undefined ? c.extras?.raw_args === text : JSON.stringify(c.args) === JSON.stringify(parsed))),
            ).toBe(true);
          }
        });
      }),
      { numRuns: 150 },
    );
  });
});
