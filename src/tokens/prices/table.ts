/**
 * Model prices as data: USD per million tokens, one row per model, each with
 * the vendor's public pricing page (`source`) and the date the price is from.
 *
 * Where the rows come from (README "Costs" says the same):
 * - Anthropic: the pricing page's table (base input, 5-minute cache writes,
 *   1-hour cache writes, cache hits, output; the >200k-token rates for the
 *   Sonnet 4 family), compared on 2026-11-23 with a copy of that page for the
 *   models it listed (Opus 4.1 down to Haiku 3); the 4.5 models as the page
 *   listed them at their launch (dates below).
 * - OpenAI and Google: the vendors' pricing pages as of 2025-11-24, recorded
 *   from knowledge of those pages and compared with third-party copies of
 *   them (2026); no copy of the vendor page itself was at hand. `date` says so
 *   per row.
 * Prices change: a user's own prices (registerPrices, TRACEPIPE_PRICES,
 * --prices) win over these rows. A model whose price was not known for
 * certain is left out (no cost beats a wrong one): previews, audio and
 * realtime models, fine-tunes, and dated snapshots priced unlike their alias
 * (gpt-4o-2024-05-13 has its own row for that reason).
 */

export interface LongContextPrice {
  /** The rates below apply to the whole request when its input tokens exceed this. */
  above_input_tokens: number;
  input: number;
  output: number;
  cached_input?: number;
  cache_write?: number;
  cache_write_1h?: number;
  input_audio?: number;
}

export interface ModelPrice {
  provider: string;
  /** The model's canonical name; dated ids and aliases resolve to it (match.ts). */
  model: string;
  /** Other names the vendor gives the same model at the same price (`claude-sonnet-4-0`). */
  aliases?: string[];
  /** Uncached input (text, image, video). */
  input: number;
  /** Input read from the prompt cache. */
  cached_input?: number;
  /** Input written to the prompt cache; Anthropic's 5-minute writes. */
  cache_write?: number;
  /** Anthropic's 1-hour cache writes. */
  cache_write_1h?: number;
  /** Uncached audio input, where the vendor prices it apart (Gemini). */
  input_audio?: number;
  output: number;
  /** Reasoning tokens, only where priced apart from output (none of the current rows). */
  reasoning?: number;
  /** Rates for long prompts (Gemini 2.5 Pro and 1.5, Claude Sonnet 4 / 4.5 with 1M context). */
  long_context?: LongContextPrice;
  /** The vendor's public pricing page. */
  source?: string;
  /** When the price was taken (YYYY-MM-DD). */
  date?: string;
  note?: string;
}

const OPENAI = "https://platform.openai.com/docs/pricing";
const ANTHROPIC = "https://docs.anthropic.com/en/docs/about-claude/pricing";
const GOOGLE = "https://ai.google.dev/gemini-api/docs/pricing";
/** OpenAI and Google rows: the vendor pages as of this date (see the module comment). */
const KNOWN = "2025-11-24";
/** Anthropic rows compared with a copy of the vendor page on this date. */
const CHECKED = "2026-11-23";

function openai(
  model: string,
  input: number,
  cached_input: number | undefined,
  output: number,
  extra: Partial<ModelPrice> = {},
): ModelPrice {
  return {
    provider: "openai",
    model,
    input,
    ...(cached_input !== undefined ? { cached_input } : {}),
    output,
    source: OPENAI,
    date: KNOWN,
    ...extra,
  };
}

/** Anthropic's multipliers are the page's: 5-minute writes 1.25x input, 1-hour writes 2x, hits 0.1x; written out, not computed, to match the page. */
function anthropic(
  model: string,
  aliases: string[],
  input: number,
  cache_write: number,
  cache_write_1h: number,
  cached_input: number,
  output: number,
  extra: Partial<ModelPrice> = {},
): ModelPrice {
  return {
    provider: "anthropic",
    model,
    aliases,
    input,
    cached_input,
    cache_write,
    cache_write_1h,
    output,
    source: ANTHROPIC,
    date: CHECKED,
    ...extra,
  };
}

function google(
  model: string,
  input: number,
  input_audio: number,
  cached_input: number | undefined,
  output: number,
  extra: Partial<ModelPrice> = {},
): ModelPrice {
  return {
    provider: "google",
    model,
    input,
    input_audio,
    ...(cached_input !== undefined ? { cached_input } : {}),
    output,
    source: GOOGLE,
    date: KNOWN,
    ...extra,
  };
}

/**
 * Claude Sonnet 4 and 4.5 with the 1M-token context: every token of a >200k-token request at
 * these rates. Input and output were on the compared page; the cache rates (the usual 1.25x,
 * 2x and 0.1x of the long input rate) are from knowledge of the page, not compared.
 */
const SONNET_LONG: LongContextPrice = {
  above_input_tokens: 200_000,
  input: 6,
  output: 22.5,
  cached_input: 0.6,
  cache_write: 7.5,
  cache_write_1h: 12,
};

export const PRICE_TABLE: readonly ModelPrice[] = [
  // OpenAI: GPT-5 family
  openai("gpt-5", 1.25, 0.125, 10),
  openai("gpt-5-mini", 0.25, 0.025, 2),
  openai("gpt-5-nano", 0.05, 0.005, 0.4),
  openai("gpt-5-chat", 1.25, 0.125, 10, { note: "the API id is gpt-5-chat-latest" }),
  openai("gpt-5-pro", 15, undefined, 120),
  openai("gpt-5.1", 1.25, 0.125, 10),
  // GPT-4.1 family
  openai("gpt-4.1", 2, 0.5, 8),
  openai("gpt-4.1-mini", 0.4, 0.1, 1.6),
  openai("gpt-4.1-nano", 0.1, 0.025, 0.4),
  // GPT-4o
  openai("gpt-4o", 2.5, 1.25, 10),
  openai("gpt-4o-2024-05-13", 5, undefined, 15, { note: "the first gpt-4o snapshot kept its launch price" }),
  openai("gpt-4o-mini", 0.15, 0.075, 0.6),
  // o-series (reasoning tokens are output tokens, at the output price)
  openai("o1", 15, 7.5, 60),
  openai("o1-mini", 1.1, 0.55, 4.4),
  openai("o1-pro", 150, undefined, 600),
  openai("o3", 2, 0.5, 8, { note: "price since 2025-06-10 (was 10 / 2.5 / 40)" }),
  openai("o3-mini", 1.1, 0.55, 4.4),
  openai("o3-pro", 20, undefined, 80),
  openai("o4-mini", 1.1, 0.275, 4.4),
  // Embeddings: input only
  openai("text-embedding-3-small", 0.02, undefined, 0),
  openai("text-embedding-3-large", 0.13, undefined, 0),
  openai("text-embedding-ada-002", 0.1, undefined, 0),

  // Anthropic: input, 5m cache write, 1h cache write, cache hit, output
  anthropic("claude-opus-4-5", ["claude-opus-4-5-20251101"], 5, 6.25, 10, 0.5, 25, { date: "2025-11-24" }),
  anthropic("claude-sonnet-4-5", ["claude-sonnet-4-5-20250929"], 3, 3.75, 6, 0.3, 15, { date: "2025-09-29", long_context: SONNET_LONG }),
  anthropic("claude-haiku-4-5", ["claude-haiku-4-5-20251001"], 1, 1.25, 2, 0.1, 5, { date: "2025-10-15" }),
  anthropic("claude-opus-4-1", ["claude-opus-4-1-20250805"], 15, 18.75, 30, 1.5, 75),
  anthropic("claude-opus-4", ["claude-opus-4-0", "claude-opus-4-20250514"], 15, 18.75, 30, 1.5, 75),
  anthropic("claude-sonnet-4", ["claude-sonnet-4-0", "claude-sonnet-4-20250514"], 3, 3.75, 6, 0.3, 15, { long_context: SONNET_LONG }),
  anthropic("claude-3-7-sonnet", ["claude-3-7-sonnet-20250219"], 3, 3.75, 6, 0.3, 15),
  anthropic("claude-3-5-sonnet", ["claude-3-5-sonnet-20241022", "claude-3-5-sonnet-20240620"], 3, 3.75, 6, 0.3, 15),
  anthropic("claude-3-5-haiku", ["claude-3-5-haiku-20241022"], 0.8, 1, 1.6, 0.08, 4),
  anthropic("claude-3-opus", ["claude-3-opus-20240229"], 15, 18.75, 30, 1.5, 75),
  anthropic("claude-3-haiku", ["claude-3-haiku-20240307"], 0.25, 0.3, 0.5, 0.03, 1.25),

  // Google Gemini (Gemini Developer API, paid tier): input (text/image/video), audio input, cache read, output.
  // Thinking tokens are output tokens, at the output price.
  google("gemini-2.5-pro", 1.25, 1.25, 0.125, 10, {
    long_context: { above_input_tokens: 200_000, input: 2.5, input_audio: 2.5, cached_input: 0.25, output: 15 },
  }),
  google("gemini-2.5-flash", 0.3, 1, 0.03, 2.5),
  google("gemini-2.5-flash-lite", 0.1, 0.3, 0.01, 0.4),
  google("gemini-2.0-flash", 0.1, 0.7, 0.025, 0.4),
  google("gemini-2.0-flash-lite", 0.075, 0.075, undefined, 0.3),
  google("gemini-1.5-pro", 1.25, 1.25, 0.3125, 5, {
    date: "2024-10-01",
    long_context: { above_input_tokens: 128_000, input: 2.5, input_audio: 2.5, cached_input: 0.625, output: 10 },
  }),
  google("gemini-1.5-flash", 0.075, 0.075, 0.01875, 0.3, {
    date: "2024-10-01",
    long_context: { above_input_tokens: 128_000, input: 0.15, input_audio: 0.15, cached_input: 0.0375, output: 0.6 },
  }),
  google("gemini-1.5-flash-8b", 0.0375, 0.0375, 0.01, 0.15, {
    date: "2024-10-01",
    long_context: { above_input_tokens: 128_000, input: 0.075, input_audio: 0.075, cached_input: 0.02, output: 0.3 },
  }),
];
