/**
 * OpenAI chat-completions and Anthropic Messages share the chat request and
 * reply shapes, so their `detect` recognisers are one rule seen from either
 * side (markers.ts): a vendor claims a request or a SPEC §2.6 reply only when
 * the evidence points to it and not to the other, and a chat request with no
 * evidence of the other vendor when its own response is beside it.
 */
import type { Recognisers } from "./detect.js";
import { looksLikeChatRequest, replyEvidence, requestEvidence, type Evidence } from "./markers.js";
import { replyMessage } from "./reply.js";

export type ChatVendor = keyof Evidence;

export function chatClaims(vendor: ChatVendor): Pick<Recognisers, "isRequest" | "isReply" | "settledByResponse"> {
  const other: ChatVendor = vendor === "openai" ? "anthropic" : "openai";
  const only = (ev: Evidence) => ev[vendor] && !ev[other];
  return {
    isRequest: (v) => looksLikeChatRequest(v) && only(requestEvidence(v)),
    isReply: (v) => {
      const m = replyMessage(v);
      return m !== undefined && only(replyEvidence(m));
    },
    settledByResponse: (request) => looksLikeChatRequest(request) && !requestEvidence(request)[other],
  };
}
