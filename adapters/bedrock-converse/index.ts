/**
 * Amazon Bedrock Converse adapter: Converse / ConverseStream inputs, Converse
 * responses and ConverseStream events (as the AWS SDK yields them, or as the
 * service's JSON with bytes in base64) -> native messages. Pure functions;
 * throws only NormalizeError.
 */
import type { Adapter } from "../types.js";
import { describe } from "../common/guards.js";
import { recordAdapter, type RecordReader } from "../common/record.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { normalizeMessages } from "./request.js";
export { normalizeUsage } from "./usage.js";
export { blockToNative } from "./blocks.js";

export const FORMAT = "bedrock-converse";

const reader: RecordReader = {
  format: FORMAT,
  provider: "bedrock",
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  kindOf: (p) =>
    "output" in p ? "response" : "messages" in p || "modelId" in p || "system" in p ? "request" : "role" in p ? "response" : undefined,
  unknown: (p) => `not a Bedrock Converse request, response or stream: ${describe(p)} without modelId, messages or output`,
};

export const bedrockConverse: Adapter = recordAdapter(reader, { detect, createStreamAccumulator });

/** A request, a response, a stream, or {request, response}: the DESIGN.md output record. */
export const normalize = bedrockConverse.normalize;

export default bedrockConverse;
