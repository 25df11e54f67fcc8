/**
 * The native message format (SPEC §2.6), written once as zod schemas. The
 * TypeScript types and the exported JSON Schema are derived from these; there
 * is no hand-written parallel interface.
 *
 * Objects are strict: anything a vendor sent that has no native home goes into
 * `extras` (DESIGN "Mapping decisions"), so an unknown key is a bug, not data.
 * The lenient schema allows `extras` and media blocks without `base64`; the
 * letter of SPEC (base64 required, no extras) is enforced by `validate(..., {strict: true})`.
 *
 * The schemas are built on first use (`nativeSchemas()`): the main entry checks
 * well-formed messages without them (shape.ts), so a traced process that never
 * meets a malformed or native-format record never builds them.
 *
 * Written with zod/mini, whose functions the build bundles one by one: the main
 * entry validates with these schemas, and classic zod's chained methods would
 * bring the whole library into every traced process.
 */
import {
  array,
  boolean,
  describe,
  discriminatedUnion,
  enum as oneOf,
  gte,
  int,
  literal,
  looseObject,
  number,
  optional,
  record,
  strictObject,
  string,
  unknown,
  type infer as Infer,
} from "zod/mini";
import "../internal/zod-english.js";

export const MEDIA_BLOCK_TYPES = ["image", "file", "audio", "video"] as const;

function buildSchemas() {
  /** Provider-specific data that has no native field. Allowed on every block and message. */
  const Extras = record(string(), unknown()).check(describe("Provider-specific fields with no native home"));

  const TextBlock = strictObject({
    type: literal("text"),
    text: string(),
    annotations: optional(array(record(string(), unknown()))),
    extras: optional(Extras),
  });

  const ReasoningBlock = strictObject({
    type: literal("reasoning"),
    text: string(),
    extras: optional(Extras),
  });

  /** Shared by image, file, audio and video. Exactly one source is checked by validate(). */
  const mediaFields = {
    url: optional(string()),
    base64: optional(string()).check(describe("Marked required by SPEC §2.6; enforced by strict validation")),
    id: optional(string()).check(describe("Reference to externally stored content")),
    mime_type: optional(string()),
    extras: optional(Extras),
  };

  const ImageBlock = strictObject({ type: literal("image"), ...mediaFields });
  const FileBlock = strictObject({ type: literal("file"), ...mediaFields });
  const AudioBlock = strictObject({ type: literal("audio"), ...mediaFields });
  const VideoBlock = strictObject({ type: literal("video"), ...mediaFields });

  const ToolCallBlock = strictObject({
    type: literal("tool_call"),
    name: optional(string()),
    args: record(string(), unknown()),
    id: optional(string()),
    extras: optional(Extras),
  });

  const ServerToolCallBlock = strictObject({
    type: literal("server_tool_call"),
    id: string(),
    name: string(),
    args: record(string(), unknown()),
    extras: optional(Extras),
  });

  const ServerToolResultStatus = oneOf(["success", "error"]);

  const ServerToolResultBlock = strictObject({
    type: literal("server_tool_result"),
    tool_call_id: string(),
    id: optional(string()),
    status: ServerToolResultStatus,
    output: optional(unknown()),
    extras: optional(Extras),
  });

  const ContentBlock = discriminatedUnion("type", [
    TextBlock,
    ReasoningBlock,
    ImageBlock,
    FileBlock,
    AudioBlock,
    VideoBlock,
    ToolCallBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
  ]);

  const tokenCount = number().check(int(), gte(0));

  /** Token details keep the well-known keys typed and let vendors add their own counts. */
  const InputTokenDetails = looseObject({
    cache_read: optional(tokenCount),
    cache_creation: optional(tokenCount),
    audio: optional(tokenCount),
  }).check(describe("Breakdown of input_tokens; every value is already included in input_tokens"));

  const OutputTokenDetails = looseObject({
    reasoning: optional(tokenCount),
    audio: optional(tokenCount),
  }).check(describe("Breakdown of output_tokens; every value is already included in output_tokens"));

  const usd = number().check(gte(0));

  /** Costs (USD) by kind, like the token details: every value is already included in input_cost / output_cost. */
  const InputCostDetails = looseObject({
    cache_read: optional(usd),
    cache_creation: optional(usd),
    audio: optional(usd),
  }).check(describe("Breakdown of input_cost (USD); every value is already included in input_cost"));

  const OutputCostDetails = looseObject({
    reasoning: optional(usd),
  }).check(describe("Breakdown of output_cost (USD); every value is already included in output_cost"));

  const UsageMetadata = strictObject({
    input_tokens: tokenCount,
    output_tokens: tokenCount,
    total_tokens: tokenCount,
    input_token_details: optional(InputTokenDetails),
    output_token_details: optional(OutputTokenDetails),
    /** true when the counts were estimated locally rather than reported by the vendor. */
    estimated: optional(boolean()),
    input_cost: optional(number().check(gte(0))),
    output_cost: optional(number().check(gte(0))),
    total_cost: optional(number().check(gte(0))),
    input_cost_details: optional(InputCostDetails),
    output_cost_details: optional(OutputCostDetails),
    extras: optional(Extras),
  });

  const Role = oneOf(["system", "reasoning", "user", "assistant", "tool"]);

  const Message = strictObject({
    role: Role,
    content: array(ContentBlock),
    tool_call_id: optional(string()).check(describe("Only on role tool; names a tool call in an earlier assistant message")),
    usage_metadata: optional(UsageMetadata),
    extras: optional(Extras),
  });

  const Messages = array(Message);
  return {
    Extras,
    TextBlock,
    ReasoningBlock,
    ImageBlock,
    FileBlock,
    AudioBlock,
    VideoBlock,
    ToolCallBlock,
    ServerToolCallBlock,
    ServerToolResultStatus,
    ServerToolResultBlock,
    ContentBlock,
    InputTokenDetails,
    OutputTokenDetails,
    InputCostDetails,
    OutputCostDetails,
    UsageMetadata,
    Role,
    Message,
    Messages,
  };
}

type NativeSchemas = ReturnType<typeof buildSchemas>;
let built: NativeSchemas | undefined;

/** The native format's schemas, built once, on the first call. */
export function nativeSchemas(): NativeSchemas {
  return (built ??= buildSchemas());
}

export type Extras = Infer<NativeSchemas["Extras"]>;
export type TextBlock = Infer<NativeSchemas["TextBlock"]>;
export type ReasoningBlock = Infer<NativeSchemas["ReasoningBlock"]>;
export type ImageBlock = Infer<NativeSchemas["ImageBlock"]>;
export type FileBlock = Infer<NativeSchemas["FileBlock"]>;
export type AudioBlock = Infer<NativeSchemas["AudioBlock"]>;
export type VideoBlock = Infer<NativeSchemas["VideoBlock"]>;
export type MediaBlock = ImageBlock | FileBlock | AudioBlock | VideoBlock;
export type ToolCallBlock = Infer<NativeSchemas["ToolCallBlock"]>;
export type ServerToolCallBlock = Infer<NativeSchemas["ServerToolCallBlock"]>;
export type ServerToolResultBlock = Infer<NativeSchemas["ServerToolResultBlock"]>;
export type ContentBlock = Infer<NativeSchemas["ContentBlock"]>;
export type UsageMetadata = Infer<NativeSchemas["UsageMetadata"]>;
export type Role = Infer<NativeSchemas["Role"]>;
export type Message = Infer<NativeSchemas["Message"]>;
