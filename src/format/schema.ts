/**
 * The native message format (SPEC §2.6), written once as zod schemas. The
 * TypeScript types and the exported JSON Schema are derived from these; there
 * is no hand-written parallel interface.
 *
 * Objects are strict: anything a vendor sent that has no native home goes into
 * `extras` (DESIGN "Mapping decisions"), so an unknown key is a bug, not data.
 * The lenient schema allows `extras` and media blocks without `base64`; the
 * letter of SPEC (base64 required, no extras) is enforced by `validate(..., {strict: true})`.
 */
import { z } from "zod";

/** Provider-specific data that has no native field. Allowed on every block and message. */
export const Extras = z.record(z.string(), z.unknown()).describe("Provider-specific fields with no native home");

export const TextBlock = z.strictObject({
  type: z.literal("text"),
  text: z.string(),
  annotations: z.array(z.record(z.string(), z.unknown())).optional(),
  extras: Extras.optional(),
});

export const ReasoningBlock = z.strictObject({
  type: z.literal("reasoning"),
  text: z.string(),
  extras: Extras.optional(),
});

/** Shared by image, file, audio and video. Exactly one source is checked by validate(). */
const mediaFields = {
  url: z.string().optional(),
  base64: z.string().optional().describe("Marked required by SPEC §2.6; enforced by strict validation"),
  id: z.string().optional().describe("Reference to externally stored content"),
  mime_type: z.string().optional(),
  extras: Extras.optional(),
};

export const ImageBlock = z.strictObject({ type: z.literal("image"), ...mediaFields });
export const FileBlock = z.strictObject({ type: z.literal("file"), ...mediaFields });
export const AudioBlock = z.strictObject({ type: z.literal("audio"), ...mediaFields });
export const VideoBlock = z.strictObject({ type: z.literal("video"), ...mediaFields });

export const ToolCallBlock = z.strictObject({
  type: z.literal("tool_call"),
  name: z.string().optional(),
  args: z.record(z.string(), z.unknown()),
  id: z.string().optional(),
  extras: Extras.optional(),
});

export const ServerToolCallBlock = z.strictObject({
  type: z.literal("server_tool_call"),
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  extras: Extras.optional(),
});

export const ServerToolResultStatus = z.enum(["success", "error"]);

export const ServerToolResultBlock = z.strictObject({
  type: z.literal("server_tool_result"),
  tool_call_id: z.string(),
  id: z.string().optional(),
  status: ServerToolResultStatus,
  output: z.unknown().optional(),
  extras: Extras.optional(),
});

export const ContentBlock = z.discriminatedUnion("type", [
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

const tokenCount = z.number().int().nonnegative();

/** Token details keep the well-known keys typed and let vendors add their own counts. */
export const InputTokenDetails = z
  .looseObject({
    cache_read: tokenCount.optional(),
    cache_creation: tokenCount.optional(),
    audio: tokenCount.optional(),
  })
  .describe("Breakdown of input_tokens; every value is already included in input_tokens");

export const OutputTokenDetails = z
  .looseObject({
    reasoning: tokenCount.optional(),
    audio: tokenCount.optional(),
  })
  .describe("Breakdown of output_tokens; every value is already included in output_tokens");

const usd = z.number().nonnegative();

/** Costs (USD) by kind, like the token details: every value is already included in input_cost / output_cost. */
export const InputCostDetails = z
  .looseObject({
    cache_read: usd.optional(),
    cache_creation: usd.optional(),
    audio: usd.optional(),
  })
  .describe("Breakdown of input_cost (USD); every value is already included in input_cost");

export const OutputCostDetails = z
  .looseObject({
    reasoning: usd.optional(),
  })
  .describe("Breakdown of output_cost (USD); every value is already included in output_cost");

export const UsageMetadata = z.strictObject({
  input_tokens: tokenCount,
  output_tokens: tokenCount,
  total_tokens: tokenCount,
  input_token_details: InputTokenDetails.optional(),
  output_token_details: OutputTokenDetails.optional(),
  /** true when the counts were estimated locally rather than reported by the vendor. */
  estimated: z.boolean().optional(),
  input_cost: z.number().nonnegative().optional(),
  output_cost: z.number().nonnegative().optional(),
  total_cost: z.number().nonnegative().optional(),
  input_cost_details: InputCostDetails.optional(),
  output_cost_details: OutputCostDetails.optional(),
  extras: Extras.optional(),
});

export const Role = z.enum(["system", "reasoning", "user", "assistant", "tool"]);

export const Message = z.strictObject({
  role: Role,
  content: z.array(ContentBlock),
  tool_call_id: z.string().optional().describe("Only on role tool; names a tool call in an earlier assistant message"),
  usage_metadata: UsageMetadata.optional(),
  extras: Extras.optional(),
});

export const Messages = z.array(Message);

export type Extras = z.infer<typeof Extras>;
export type TextBlock = z.infer<typeof TextBlock>;
export type ReasoningBlock = z.infer<typeof ReasoningBlock>;
export type ImageBlock = z.infer<typeof ImageBlock>;
export type FileBlock = z.infer<typeof FileBlock>;
export type AudioBlock = z.infer<typeof AudioBlock>;
export type VideoBlock = z.infer<typeof VideoBlock>;
export type MediaBlock = ImageBlock | FileBlock | AudioBlock | VideoBlock;
export type ToolCallBlock = z.infer<typeof ToolCallBlock>;
export type ServerToolCallBlock = z.infer<typeof ServerToolCallBlock>;
export type ServerToolResultBlock = z.infer<typeof ServerToolResultBlock>;
export type ContentBlock = z.infer<typeof ContentBlock>;
export type UsageMetadata = z.infer<typeof UsageMetadata>;
export type Role = z.infer<typeof Role>;
export type Message = z.infer<typeof Message>;
