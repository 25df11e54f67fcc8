/**
 * The vendors' own stream accumulators, fed recorded-style events without a
 * network: openai-node's `ChatCompletionStream` and the Anthropic SDK's
 * `MessageStream` read a ReadableStream of JSON lines (their
 * `fromReadableStream` entry points), and openai-node's Responses accumulator
 * is applied event by event. Each returns the accumulator's state after every
 * event, deep-copied at that moment.
 */
import { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { Response, ResponseStreamEvent } from "openai/resources/responses/responses";
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import type { MessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";

/** Events as the JSON-lines byte stream the SDKs' `fromReadableStream` reads. */
function jsonLines(events: readonly unknown[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(events.map((e) => `${JSON.stringify(e)}\n`).join(""));
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** `ChatCompletionStream`'s snapshot after each chunk. */
export async function chatSnapshots(chunks: readonly ChatCompletionChunk[]): Promise<unknown[]> {
  const out: unknown[] = [];
  const stream = ChatCompletionStream.fromReadableStream(jsonLines(chunks));
  stream.on("chunk", (_chunk, snapshot) => out.push(structuredClone(snapshot)));
  // A stream cut before finish_reason ends in an error from the final step; the snapshots are what matters.
  stream.on("error", () => {});
  await stream.done().catch(() => {});
  return out;
}

/** `MessageStream`'s snapshot after each event. */
export async function messageSnapshots(events: readonly MessageStreamEvent[]): Promise<unknown[]> {
  const out: unknown[] = [];
  const stream = MessageStream.fromReadableStream(jsonLines(events));
  stream.on("streamEvent", (_event, snapshot) => out.push(structuredClone(snapshot)));
  stream.on("error", () => {});
  await stream.done().catch(() => {});
  return out;
}

/** openai-node's Responses snapshot after each event. */
export function responseSnapshots(events: readonly ResponseStreamEvent[]): Response[] {
  const out: Response[] = [];
  let snapshot: Response | undefined;
  for (const e of events) {
    snapshot = accumulateResponse(e, snapshot);
    out.push(structuredClone(snapshot));
  }
  return out;
}
