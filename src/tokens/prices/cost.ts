/**
 * Cost of one call from its usage and its model's price. Pure.
 *
 * Token conventions (docs/message-format.md): input_tokens include cached
 * tokens (cache_read, cache_creation) for every vendor, and
 * output_token_details.reasoning is part of output_tokens. So:
 *   input_cost  = uncached × input (audio at input_audio where priced apart)
 *               + cache_read × cached_input + cache_creation × cache_write
 *                 (Anthropic's 1-hour writes, when the usage says how many, at cache_write_1h)
 *   output_cost = output × output, reasoning at its own price when the row has one
 *   total_cost  = input_cost + output_cost
 * A request whose input exceeds the row's long-context threshold is priced
 * whole at the long-context rates, as Google and Anthropic bill it.
 *
 * No cost rather than a wrong one: when the usage has tokens of a kind the
 * row has no price for (cache reads on a model without a cached rate, audio
 * output, ...) the result is undefined.
 *
 * Rounding: each amount to 12 significant digits, which removes float noise
 * (0.1 + 0.2) and keeps far more precision than a bill has.
 */
import type { UsageMetadata } from "../../format/schema.js";
import type { LongContextPrice, ModelPrice } from "./table.js";

export interface CostFields {
  input_cost: number;
  output_cost: number;
  total_cost: number;
  input_cost_details?: { cache_read?: number; cache_creation?: number; audio?: number };
  output_cost_details?: { reasoning?: number };
}

const PER_TOKEN = 1e-6;

/** 10^k for k = 0..22: each is exact in a double. */
const POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/**
 * `x` to 12 significant digits: exactly Number(x.toPrecision(12)), which
 * formats a string and parses it back (dear when a span's usage has three to
 * five amounts). The usual amount is instead scaled so that its 12 digits are
 * the integer part, rounded, and scaled back: the division by an exact power
 * of ten is correctly rounded, so the result is the double nearest those 12
 * digits, as parsing them gives. Where the scaled value's own rounding error
 * could decide the digits (a fraction within 0.001 of one half), where the
 * scale is off by one (log10 near a power of ten) or the power is not exact,
 * it takes the formatting path.
 */
export function roundUsd(x: number): number {
  if (x === 0) return 0;
  const a = Math.abs(x);
  const k = 11 - Math.floor(Math.log10(a));
  if (k >= 0 && k <= 22) {
    const scaled = a * POW10[k]!;
    const frac = scaled - Math.floor(scaled);
    if (scaled >= 1e11 && scaled < 1e12 - 1 && Math.abs(frac - 0.5) > 1e-3) {
      const r = Math.round(scaled) / POW10[k]!;
      return x < 0 ? -r : r;
    }
  }
  return Number(x.toPrecision(12));
}

function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0;
}

/** Anthropic reports 1-hour cache writes in `cache_creation.ephemeral_1h_input_tokens` (kept in usage extras). */
function oneHourWrites(usage: UsageMetadata): number {
  const cc = (usage.extras as { cache_creation?: { ephemeral_1h_input_tokens?: unknown } } | undefined)?.cache_creation;
  return count(cc?.ephemeral_1h_input_tokens);
}

type Rates = Pick<ModelPrice, "input" | "output" | "cached_input" | "cache_write" | "cache_write_1h" | "input_audio" | "reasoning">;

function ratesFor(price: ModelPrice, inputTokens: number): Rates {
  const long: LongContextPrice | undefined = price.long_context;
  if (!long || inputTokens <= long.above_input_tokens) return price;
  // Reasoning is not priced apart in any long-context tier known; the tier's output rate covers it.
  return {
    input: long.input,
    output: long.output,
    cached_input: long.cached_input,
    cache_write: long.cache_write,
    cache_write_1h: long.cache_write_1h,
    input_audio: long.input_audio,
  };
}

/** The cost fields for this usage at this price, or undefined when part of the usage has no price. */
export function costOf(usage: UsageMetadata, price: ModelPrice): CostFields | undefined {
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  const inDetails = (usage.input_token_details ?? {}) as Record<string, unknown>;
  const outDetails = (usage.output_token_details ?? {}) as Record<string, unknown>;
  const r = ratesFor(price, input);

  const cacheRead = count(inDetails.cache_read);
  const cacheWrite = count(inDetails.cache_creation);
  const writes1h = Math.min(oneHourWrites(usage), cacheWrite);
  const writes5m = cacheWrite - writes1h;
  const uncached = Math.max(0, input - cacheRead - cacheWrite);
  // Audio counts are of all audio input; the part not read from the cache is taken as uncached audio.
  const audio = Math.min(count(inDetails.audio), uncached);
  if (cacheRead && r.cached_input === undefined) return undefined;
  if (writes5m && r.cache_write === undefined) return undefined;
  if (writes1h && r.cache_write_1h === undefined) return undefined;
  if (count(outDetails.audio)) return undefined;

  const audioRate = r.input_audio ?? r.input;
  const readCost = cacheRead * (r.cached_input ?? 0) * PER_TOKEN;
  const writeCost = (writes5m * (r.cache_write ?? 0) + writes1h * (r.cache_write_1h ?? 0)) * PER_TOKEN;
  const audioCost = audio * audioRate * PER_TOKEN;
  const inputCost = (uncached - audio) * r.input * PER_TOKEN + audioCost + readCost + writeCost;

  const reasoning = Math.min(count(outDetails.reasoning), output);
  const reasoningRate = r.reasoning ?? r.output;
  const reasoningCost = reasoning * reasoningRate * PER_TOKEN;
  const outputCost = (output - reasoning) * r.output * PER_TOKEN + reasoningCost;

  const out: CostFields = {
    input_cost: roundUsd(inputCost),
    output_cost: roundUsd(outputCost),
    total_cost: roundUsd(inputCost + outputCost),
  };
  const inCost: NonNullable<CostFields["input_cost_details"]> = {};
  if (cacheRead) inCost.cache_read = roundUsd(readCost);
  if (cacheWrite) inCost.cache_creation = roundUsd(writeCost);
  if (audio && r.input_audio !== undefined) inCost.audio = roundUsd(audioCost);
  if (Object.keys(inCost).length) out.input_cost_details = inCost;
  if (reasoning) out.output_cost_details = { reasoning: roundUsd(reasoningCost) };
  return out;
}
