/**
 * Token estimation for when a vendor reported no usage (streams without usage,
 * logs without usage). Results carry `estimated: true`.
 *
 * - Text: countTextTokens (count.ts): tiktoken for OpenAI models, the
 *   documented approximation otherwise; linear in the input on every shape,
 *   never throwing.
 * - Chat overhead as OpenAI documents it: 3 tokens per message, 1 per name,
 *   3 to prime the reply; the role is one token, counted without encoding it.
 * - Images: 85 tokens at low detail, else 85 + 170 per 512 px tile when the
 *   size is known (extras.width / extras.height), else 765 (a 1024x1024 image
 *   at high detail).
 * - Encoders load lazily, once; freeEncoders() releases them. If the WASM
 *   cannot load, the approximation is used and a warning is printed once.
 */
import type { ContentBlock, Message, UsageMetadata } from "../format/schema.js";
import { blockText, imageTokens, roleTokens } from "./content.js";
import { countTextTokens } from "./count.js";
import { encodingForModel } from "./encoders.js";

export { approximateTokens, countTextTokens } from "./count.js";
export { encodingForModel, freeEncoders, loadedEncodings, setEncoderLoader } from "./encoders.js";
export { pieces } from "./split.js";

function contentTokens(m: Message, model: string | undefined): number {
  const content: unknown = m?.content;
  if (typeof content === "string") return countTextTokens(content, model);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const b of content as ContentBlock[]) {
    // A block a hostile or broken producer made unreadable (a throwing getter)
    // counts as nothing rather than failing the whole estimate.
    try {
      if (b && typeof b === "object") n += b.type === "image" ? imageTokens(b) : countTextTokens(blockText(b), model);
    } catch {
      continue;
    }
  }
  return n;
}

/** Prompt tokens: OpenAI's chat format adds 3 per message and 1 per name around the role and content. */
function promptTokens(messages: readonly Message[], model: string | undefined, openai: boolean): number {
  let n = 0;
  for (const m of messages) {
    if (openai) n += 3 + (m?.extras?.name !== undefined ? 1 : 0);
    n += roleTokens(m?.role) + contentTokens(m, model);
  }
  return n;
}

export interface EstimateInput {
  model?: string;
  provider?: string;
  inputs: readonly Message[];
  outputs: readonly Message[];
}

export function estimateUsage(input: EstimateInput): UsageMetadata {
  const opts: Partial<EstimateInput> = input ?? {};
  const model = typeof opts.model === "string" ? opts.model : undefined;
  const inputs = Array.isArray(opts.inputs) ? opts.inputs : [];
  const outputs = Array.isArray(opts.outputs) ? opts.outputs : [];
  const openai = encodingForModel(model) !== undefined;
  // +3 primes the reply (`<|start|>assistant<|message|>`).
  const prompt = promptTokens(inputs, model, openai) + (openai && inputs.length ? 3 : 0);
  let output = 0;
  for (const m of outputs) output += contentTokens(m, model);
  return { input_tokens: prompt, output_tokens: output, total_tokens: prompt + output, estimated: true };
}

/** SPEC §2.6: the model for estimation is metadata.trace_model_name, else inputs.model, else inputs.model_name. */
export function resolveModel(run: {
  extra?: { metadata?: Record<string, unknown> };
  inputs?: Record<string, unknown>;
}): string | undefined {
  const candidates = [run.extra?.metadata?.trace_model_name, run.inputs?.model, run.inputs?.model_name];
  for (const c of candidates) if (typeof c === "string" && c) return c;
  return undefined;
}
