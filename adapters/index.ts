/**
 * The adapter registry, in detection order. `normalize({format: "auto"})` asks
 * each adapter's `detect`; see src/normalize.ts for how claims are resolved.
 */
import type { Adapter } from "./types.js";
import { native } from "./native/index.js";
import { openaiChat } from "./openai-chat/index.js";
import { anthropicMessages } from "./anthropic-messages/index.js";
import { openaiResponses } from "./openai-responses/index.js";
import { gemini } from "./gemini/index.js";
import { bedrockConverse } from "./bedrock-converse/index.js";
import { openaiCompletions } from "./openai-completions/index.js";
import { langchain } from "./langchain/index.js";

export type { Adapter, NormalizedRecord, RequestResult, ResponseResult, StreamAccumulator, PayloadKind, ModelInfo } from "./types.js";

export const ADAPTERS: readonly Adapter[] = [
  native,
  openaiChat,
  openaiResponses,
  anthropicMessages,
  gemini,
  bedrockConverse,
  openaiCompletions,
  langchain,
];
export const FORMAT_NAMES: readonly string[] = ADAPTERS.map((a) => a.name);

export function getAdapter(name: string): Adapter | undefined {
  // A loop, not `find` with a closure: auto-detecting normalize asks this for every record.
  for (const a of ADAPTERS) if (a.name === name) return a;
  return undefined;
}

// What src/ needs of the adapters comes through this module: the build bundles it into one
// file (scripts/build.mjs), which the main entry loads far faster than the modules one by one.
export { isStrictlyNative } from "./native/index.js";
export { detectionScope } from "./common/markers.js";
export { fastDetect, soleResponseClaim } from "./fast-detect.js";
export { native, openaiChat, openaiResponses, anthropicMessages, gemini, bedrockConverse, openaiCompletions, langchain };
