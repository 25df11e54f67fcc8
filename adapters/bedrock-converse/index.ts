/**
 * Amazon Bedrock Converse adapter: Converse / ConverseStream inputs, Converse
 * responses and ConverseStream events (as the AWS SDK yields them, or as the
 * service's JSON with bytes in base64) -> native messages. Pure functions;
 * throws only NormalizeError.
 */
import type { Adapter } from "../types.js";
import { describe } from "../common/guards.js";
import { recordAdapter } from "../common/record.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { blockToNative } from "./blocks.js";
export { detect } from "./detect.js";
export { normalizeRequest, normalizeMessages } from "./request.js";
export { normalizeResponse } from "./response.js";
export { createStreamAccumulator, normalizeStream } from "./stream.js";
export { normalizeUsage } from "./usage.js";

export const FORMAT = "bedrock-converse";

export const bedrockConverse: Adapter = recordAdapter(
  {
    format: FORMAT,
    provider: "bedrock",
    kindOf: (p) =>
      "output" in p ? "response" : "messages" in p || "modelId" in p || "system" in p ? "request" : "role" in p ? "response" : undefined,
    unknown: (p) => `not a Bedrock Converse request, response or stream: ${describe(p)} without modelId, messages or output`,
  },
  { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator },
);

/** A request, a response, a stream, or {request, response}: the DESIGN.md output record. */
export const normalize = bedrockConverse.normalize;

export default bedrockConverse;
