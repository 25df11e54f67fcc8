/**
 * Detection's fast path for the records that dominate real logs: an OpenAI
 * chat-completions or Anthropic Messages `{request, response}` pair. It
 * decides from the few keys that tell the formats apart, and gives the answer
 * asking every adapter would give, or none (then every adapter is asked).
 *
 * Every adapter claims a pair only when the response is its own reply or
 * stream (common/detect.ts), and both vendors mark theirs in the first keys:
 * `object: "chat.completion"` / the first chunk's `object`, `type: "message"` /
 * a `message_start` event. Each other adapter's own response test rules it out
 * on those keys (the tests fail at their first look), so the request is read
 * once, by the one scan the claim needs: the markers of the other vendor
 * anywhere in it (common/markers.ts), which would turn the claim down.
 *
 * Pure and conservative: a test that throws, or a request the claim does not
 * settle, leaves the payload to the full detection.
 */
import type { PayloadKind } from "./types.js";
import { isObj, type Obj } from "./common/guards.js";
import { isResponseSide, type Recognisers } from "./common/detect.js";
import { isChatWithoutAnthropicOrConverseEvidence, isConverseRequest, requestEvidence } from "./common/markers.js";
import { replyMessage } from "./common/reply.js";
import { detect as detectNative } from "./native/index.js";
import { recognisers as openaiChat, detect as detectOpenaiChat } from "./openai-chat/detect.js";
import { recognisers as openaiResponses, detect as detectOpenaiResponses } from "./openai-responses/detect.js";
import { recognisers as anthropicMessages, detect as detectAnthropicMessages } from "./anthropic-messages/detect.js";
import { recognisers as gemini, detect as detectGemini } from "./gemini/detect.js";
import { recognisers as bedrockConverse, detect as detectBedrockConverse } from "./bedrock-converse/detect.js";
import { recognisers as openaiCompletions, detect as detectOpenaiCompletions } from "./openai-completions/detect.js";
import { isResponseSide as isLangChainResponseSide } from "./langchain/detect.js";

type Vendor = "openai-chat" | "anthropic-messages";

/**
 * The vendor whose own response test the response passes, judged by its
 * marker keys. A stream's first element is an object here, so no adapter reads
 * the array as a `[role, content]` reply: its response test is its stream test.
 */
function markedBy(response: unknown): Vendor | undefined {
  if (Array.isArray(response)) {
    const first: unknown = response[0];
    if (!isObj(first)) return undefined;
    if (first.object === "chat.completion.chunk") return openaiChat.isStream(response) ? "openai-chat" : undefined;
    if (first.type === "message_start") return anthropicMessages.isStream(response) ? "anthropic-messages" : undefined;
    return undefined;
  }
  if (!isObj(response)) return undefined;
  if (response.object === "chat.completion") return openaiChat.isResponse(response) ? "openai-chat" : undefined;
  if (response.type === "message") return anthropicMessages.isResponse(response) ? "anthropic-messages" : undefined;
  return undefined;
}

/** The other vendor's response test (reply shapes included), as its pair detection asks it. */
function otherChatVendorReplies(vendor: Vendor, response: unknown): boolean {
  const r = vendor === "openai-chat" ? anthropicMessages : openaiChat;
  if (Array.isArray(response)) return r.isStream(response);
  if (r.isResponse(response)) return true;
  // Anthropic's reply test needs Anthropic evidence, which only blocks in an array of content
  // give (markers.ts): a reply message whose content is no array is never Anthropic's.
  if (vendor === "openai-chat") {
    const m = replyMessage(response);
    if (m === undefined || !Array.isArray(m.content)) return false;
  }
  return r.isReply!(response);
}

/** True when no adapter but the two chat vendors' could take this response as its own. */
function onlyChatVendorsReply(response: unknown): boolean {
  if (detectNative(response) === "response" || isLangChainResponseSide(response)) return false;
  if (Array.isArray(response))
    return (
      !openaiResponses.isStream(response) &&
      !gemini.isStream(response) &&
      !bedrockConverse.isStream(response) &&
      !openaiCompletions.isStream(response)
    );
  return (
    !openaiResponses.isResponse(response) &&
    !gemini.isResponse(response) &&
    !bedrockConverse.isResponse(response) &&
    !openaiCompletions.isResponse(response)
  );
}

/**
 * Whether `vendor` claims a pair whose response is its own: the request must be
 * chat-shaped and carry none of the other vendor's markers (the same evidence
 * its `detect` reads, common/markers.ts). Undefined for a request outside
 * those terms, which the full detection judges.
 */
function requestSettles(vendor: Vendor, request: Obj): boolean {
  if (!Array.isArray(request.messages)) return false;
  if (vendor === "openai-chat") return isChatWithoutAnthropicOrConverseEvidence(request);
  if (isConverseRequest(request)) return false;
  const ev = requestEvidence(request);
  return ev.chat && !ev.openai;
}

/** The format of an OpenAI chat or Anthropic Messages pair, as full detection would name it; undefined to ask every adapter. */
export function fastDetect(payload: unknown): string | undefined {
  try {
    if (!isObj(payload) || !("request" in payload || "response" in payload)) return undefined;
    const { request, response } = payload;
    const vendor = markedBy(response);
    if (vendor === undefined) return undefined;
    if (otherChatVendorReplies(vendor, response) || !onlyChatVendorsReply(response)) return undefined;
    if (request === undefined || request === null) return vendor;
    return isObj(request) && requestSettles(vendor, request) ? vendor : undefined;
  } catch {
    // A test that throws proves nothing about the adapters' own answers.
    return undefined;
  }
}

/** The adapters whose `detect` is common/detect.ts's `detector` over their recognisers, with their names. */
const PAIR_READERS: readonly { name: string; recognisers: Recognisers; detect: (payload: unknown) => PayloadKind | null }[] = [
  { name: "openai-chat", recognisers: openaiChat, detect: detectOpenaiChat },
  { name: "openai-responses", recognisers: openaiResponses, detect: detectOpenaiResponses },
  { name: "anthropic-messages", recognisers: anthropicMessages, detect: detectAnthropicMessages },
  { name: "gemini", recognisers: gemini, detect: detectGemini },
  { name: "bedrock-converse", recognisers: bedrockConverse, detect: detectBedrockConverse },
  { name: "openai-completions", recognisers: openaiCompletions, detect: detectOpenaiCompletions },
];

/**
 * The second fast path, for any other `{request, response}` pair with a response
 * (Responses, Gemini, Converse, completions): every adapter claims a pair only
 * beside a response of its own (common/detect.ts; native's and LangChain's
 * response tests as above), so when exactly one adapter's response test passes,
 * that adapter's `detect` alone decides, with the answer asking every adapter
 * would give. Undefined when it does not claim or another adapter might.
 */
export function soleResponseClaim(payload: unknown): string | undefined {
  try {
    if (!isObj(payload) || !("request" in payload || "response" in payload)) return undefined;
    const response = payload.response;
    if (response === undefined || response === null) return undefined;
    if (detectNative(response) === "response" || isLangChainResponseSide(response)) return undefined;
    let sole: (typeof PAIR_READERS)[number] | undefined;
    for (const reader of PAIR_READERS) {
      if (!isResponseSide(reader.recognisers, response)) continue;
      if (sole) return undefined;
      sole = reader;
    }
    return sole && sole.detect(payload) !== null ? sole.name : undefined;
  } catch {
    // A test that throws proves nothing about the adapters' own answers.
    return undefined;
  }
}
