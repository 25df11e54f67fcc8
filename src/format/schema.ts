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

/** Provider-specific data that has no native field. Allowed on every block and message. */
export const Extras = record(string(), unknown()).check(describe("Provider-specific fields with no native home"));

export const TextBlock = strictObject({
  type: literal("text"),
  text: string(),
  annotations: optional(array(record(string(), unknown()))),
  extras: optional(Extras),
});

export const ReasoningBlock = strictObject({
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

export const ImageBlock = strictObject({ type: literal("image"), ...mediaFields });
export const FileBlock = strictObject({ type: literal("file"), ...mediaFields });
export const AudioBlock = strictObject({ type: literal("audio"), ...mediaFields });
export const VideoBlock = strictObject({ type: literal("video"), ...mediaFields });

export const ToolCallBlock = strictObject({
  type: literal("tool_call"),
  name: optional(string()),
  args: record(string(), unknown()),
  id: optional(string()),
  extras: optional(Extras),
});

export const ServerToolCallBlock = strictObject({
  type: literal("server_tool_call"),
  id: string(),
  name: string(),
  args: record(string(), unknown()),
  extras: optional(Extras),
});

export const ServerToolResultStatus = oneOf(["success", "error"]);

export const ServerToolResultBlock = strictObject({
  type: literal("server_tool_result"),
  tool_call_id: string(),
  id: optional(string()),
  status: ServerToolResultStatus,
  output: optional(unknown()),
  extras: optional(Extras),
});

export const ContentBlock = discriminatedUnion("type", [
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

export const MEDIA_BLOCK_TYPES = ["image", "file", "audio", "video"] as const;

const tokenCount = number().check(int(), gte(0));

/** Token details keep the well-known keys typed and let vendors add their own counts. */
export const InputTokenDetails = looseObject({
    cache_read: optional(tokenCount),
    cache_creation: optional(tokenCount),
    audio: optional(tokenCount),
}).check(describe("Breakdown of input_tokens; every value is already included in input_tokens"));

export const OutputTokenDetails = looseObject({
    reasoning: optional(tokenCount),
    audio: optional(tokenCount),
}).check(describe("Breakdown of output_tokens; every value is already included in output_tokens"));

const usd = number().check(gte(0));

/** Costs (USD) by kind, like the token details: every value is already included in input_cost / output_cost. */
export const InputCostDetails = looseObject({
    cache_read: optional(usd),
    cache_creation: optional(usd),
    audio: optional(usd),
}).check(describe("Breakdown of input_cost (USD); every value is already included in input_cost"));

export const OutputCostDetails = looseObject({
    reasoning: optional(usd),
}).check(describe("Breakdown of output_cost (USD); every value is already included in output_cost"));

export const UsageMetadata = strictObject({
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

export const Role = oneOf(["system", "reasoning", "user", "assistant", "tool"]);

export const Message = strictObject({
  role: Role,
  content: array(ContentBlock),
  tool_call_id: optional(string()).check(describe("Only on role tool; names a tool call in an earlier assistant message")),
  usage_metadata: optional(UsageMetadata),
  extras: optional(Extras),
});

export const Messages = array(Message);

export type Extras = Infer<typeof Extras>;
export type TextBlock = Infer<typeof TextBlock>;
export type ReasoningBlock = Infer<typeof ReasoningBlock>;
export type ImageBlock = Infer<typeof ImageBlock>;
export type FileBlock = Infer<typeof FileBlock>;
export type AudioBlock = Infer<typeof AudioBlock>;
export type VideoBlock = Infer<typeof VideoBlock>;
export type MediaBlock = ImageBlock | FileBlock | AudioBlock | VideoBlock;
export type ToolCallBlock = Infer<typeof ToolCallBlock>;
export type ServerToolCallBlock = Infer<typeof ServerToolCallBlock>;
export type ServerToolResultBlock = Infer<typeof ServerToolResultBlock>;
export type ContentBlock = Infer<typeof ContentBlock>;
export type UsageMetadata = Infer<typeof UsageMetadata>;
export type Role = Infer<typeof Role>;
export type Message = Infer<typeof Message>;
