/**
 * Prices and costs: which row a model name means, what a usage costs at a
 * row's rates, and the user's own prices (code, file, environment) over the
 * table. Pure parts are table-driven; the file tests write real files.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, ValidationError } from "../../src/errors.js";
import { validate } from "../../src/format/validate.js";
import type { UsageMetadata } from "../../src/format/schema.js";
import {
  addCost,
  costFor,
  costOf,
  indexPrices,
  loadPrices,
  matchPrice,
  PRICE_TABLE,
  priceFor,
  registerPrices,
  resetPrices,
  roundUsd,
  type ModelPrice,
} from "../../src/tokens/prices/index.js";
import { tempDir } from "../helpers/runs.js";

afterEach(() => {
  resetPrices();
  delete process.env.TRACEPIPE_PRICES;
});

const index = indexPrices(PRICE_TABLE);
const matched = (name: string) => matchPrice(name, index)?.model;

describe("price table", () => {
  it("gives every row a positive input price, an output price, a vendor source and a date", () => {
    const names = new Set<string>();
    for (const r of PRICE_TABLE) {
      expect(r.input, r.model).toBeGreaterThan(0);
      expect(r.output, r.model).toBeGreaterThanOrEqual(0);
      expect(r.source, r.model).toMatch(/^https:\/\/(platform\.openai\.com|docs\.anthropic\.com|ai\.google\.dev)\//);
      expect(r.date, r.model).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      // One row per name, aliases included: a name never means two prices.
      for (const n of [r.model, ...(r.aliases ?? [])]) {
        expect(names.has(n), n).toBe(false);
        names.add(n);
      }
    }
  });

  it("covers the current OpenAI, Anthropic and Gemini families", () => {
    for (const m of [
      "gpt-4o",
      "gpt-4o-mini",
      "gpt-4.1",
      "gpt-4.1-mini",
      "gpt-4.1-nano",
      "o1",
      "o3",
      "o3-mini",
      "o4-mini",
      "gpt-5",
      "gpt-5-mini",
      "gpt-5-nano",
      "text-embedding-3-small",
      "text-embedding-3-large",
    ])
      expect(matched(m), m).toBe(m);
    for (const m of [
      "claude-3-haiku",
      "claude-3-5-sonnet",
      "claude-3-5-haiku",
      "claude-3-7-sonnet",
      "claude-sonnet-4",
      "claude-opus-4",
      "claude-opus-4-1",
      "claude-sonnet-4-5",
      "claude-haiku-4-5",
      "claude-opus-4-5",
    ])
      expect(matched(m), m).toBe(m);
    for (const m of [
      "gemini-1.5-pro",
      "gemini-1.5-flash",
      "gemini-2.0-flash",
      "gemini-2.0-flash-lite",
      "gemini-2.5-pro",
      "gemini-2.5-flash",
      "gemini-2.5-flash-lite",
    ])
      expect(matched(m), m).toBe(m);
  });
});

describe("matching a model name", () => {
  it.each([
    ["gpt-4o", "gpt-4o"],
    ["gpt-4o-2024-08-06", "gpt-4o"],
    ["gpt-4o-2024-11-20", "gpt-4o"],
    // The first snapshot kept its launch price: its own row wins over the alias.
    ["gpt-4o-2024-05-13", "gpt-4o-2024-05-13"],
    ["gpt-4o-mini-2024-07-18", "gpt-4o-mini"],
    ["GPT-4o", "gpt-4o"],
    ["openai/gpt-4.1-mini", "gpt-4.1-mini"],
    ["o1-2024-12-17", "o1"],
    ["o1-mini-2024-09-12", "o1-mini"],
    ["o3-mini-2025-01-31", "o3-mini"],
    ["gpt-5-2025-08-07", "gpt-5"],
    ["gpt-5-chat-latest", "gpt-5-chat"],
    ["claude-3-5-sonnet-20241022", "claude-3-5-sonnet"],
    ["claude-3-5-sonnet-latest", "claude-3-5-sonnet"],
    ["claude-sonnet-4-20250514", "claude-sonnet-4"],
    ["claude-sonnet-4-0", "claude-sonnet-4"],
    ["claude-sonnet-4@20250514", "claude-sonnet-4"],
    ["claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet"],
    ["anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"],
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"],
    ["eu.anthropic.claude-3-haiku-20240307-v1:0", "claude-3-haiku"],
    ["anthropic/claude-haiku-4-5", "claude-haiku-4-5"],
    ["models/gemini-2.5-flash", "gemini-2.5-flash"],
    ["gemini-2.0-flash-001", "gemini-2.0-flash"],
    ["gemini-1.5-pro-002", "gemini-1.5-pro"],
    ["projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro", "gemini-2.5-pro"],
  ])("%s -> %s", (name, model) => {
    expect(matched(name)).toBe(model);
  });

  it.each([
    // Never a loose prefix: a longer name is another model, not a variant.
    "gpt-4o-mini-tts",
    "gpt-4o-audio-preview",
    "o1-preview",
    "gpt-4",
    "gpt-4-turbo",
    "chatgpt-4o-latest",
    "gemini-2.5-flash-preview-05-20",
    "gemini-2.5-flash-image",
    "claude-2.1",
    "my-azure-deployment",
    "gpt-4o-2024-08-06-custom",
    "",
    "   ",
  ])("%j has no price", (name) => {
    expect(matchPrice(name, index)).toBeUndefined();
  });

  it("does not price o1-mini as o1 or gpt-4o-mini as gpt-4o", () => {
    expect(priceFor("o1-mini")!.input).toBe(1.1);
    expect(priceFor("o1")!.input).toBe(15);
    expect(priceFor("gpt-4o-mini")!.input).toBe(0.15);
    expect(priceFor("gpt-4o")!.input).toBe(2.5);
  });

  it("takes only strings", () => {
    expect(matchPrice(undefined, index)).toBeUndefined();
    expect(matchPrice(42, index)).toBeUndefined();
    expect(matchPrice("x".repeat(10_000), index)).toBeUndefined();
  });
});

const row = (over: Partial<ModelPrice> = {}): ModelPrice => ({ provider: "test", model: "m", input: 2, output: 8, ...over });
const usage = (over: Partial<UsageMetadata> = {}): UsageMetadata => ({
  input_tokens: 1000,
  output_tokens: 500,
  total_tokens: 1500,
  ...over,
});

describe("computing a cost", () => {
  it("prices input and output per million tokens", () => {
    expect(costOf(usage(), row())).toEqual({ input_cost: 0.002, output_cost: 0.004, total_cost: 0.006 });
  });

  it("prices cache reads at the cached rate; input_tokens include them", () => {
    // 1000 input of which 800 cached: 200 x 2 + 800 x 0.5 per million.
    const c = costOf(usage({ input_token_details: { cache_read: 800 } }), row({ cached_input: 0.5 }))!;
    expect(c).toEqual({ input_cost: 0.0008, output_cost: 0.004, total_cost: 0.0048, input_cost_details: { cache_read: 0.0004 } });
  });

  it("prices Anthropic cache writes: 5-minute at cache_write, 1-hour at cache_write_1h", () => {
    const p = row({ input: 3, cached_input: 0.3, cache_write: 3.75, cache_write_1h: 6, output: 15 });
    // 10 uncached + 100 read + 1000 written (400 of them for an hour).
    const u = usage({
      input_tokens: 1110,
      output_tokens: 0,
      total_tokens: 1110,
      input_token_details: { cache_read: 100, cache_creation: 1000 },
      extras: { cache_creation: { ephemeral_5m_input_tokens: 600, ephemeral_1h_input_tokens: 400 } },
    });
    const c = costOf(u, p)!;
    const write = (600 * 3.75 + 400 * 6) / 1e6;
    expect(c.input_cost_details).toEqual({ cache_read: 0.00003, cache_creation: roundUsd(write) });
    expect(c.input_cost).toBe(roundUsd((10 * 3 + 100 * 0.3) / 1e6 + write));
    expect(c.total_cost).toBe(c.input_cost);
  });

  it("gives reasoning its own price only when the row has one, and always reports its share", () => {
    const u = usage({ output_tokens: 500, output_token_details: { reasoning: 300 } });
    expect(costOf(u, row())).toMatchObject({ output_cost: 0.004, output_cost_details: { reasoning: 0.0024 } });
    expect(costOf(u, row({ reasoning: 20 }))).toMatchObject({
      output_cost: roundUsd((200 * 8 + 300 * 20) / 1e6),
      output_cost_details: { reasoning: 0.006 },
    });
  });

  it("prices a long prompt whole at the long-context rates", () => {
    const p = priceFor("gemini-2.5-pro")!;
    expect(costOf(usage({ input_tokens: 200_000, output_tokens: 0, total_tokens: 200_000 }), p)!.input_cost).toBe(0.25);
    expect(costOf(usage({ input_tokens: 200_001, output_tokens: 1000, total_tokens: 201_001 }), p)).toMatchObject({
      input_cost: roundUsd(200_001 * 2.5e-6),
      output_cost: 0.015,
    });
  });

  it("prices Gemini audio input at the audio rate", () => {
    const c = costOf(
      usage({ input_tokens: 1000, output_tokens: 0, total_tokens: 1000, input_token_details: { audio: 400 } }),
      priceFor("gemini-2.5-flash")!,
    )!;
    expect(c.input_cost_details).toEqual({ audio: 0.0004 });
    expect(c.input_cost).toBe(roundUsd(600 * 0.3e-6 + 400 * 1e-6));
  });

  it("gives no cost when part of the usage has no price", () => {
    expect(costOf(usage({ input_token_details: { cache_read: 10 } }), row())).toBeUndefined();
    expect(costOf(usage({ input_token_details: { cache_creation: 10 } }), row({ cached_input: 1 }))).toBeUndefined();
    expect(
      costOf(
        usage({ input_token_details: { cache_creation: 10 }, extras: { cache_creation: { ephemeral_1h_input_tokens: 10 } } }),
        row({ cache_write: 1 }),
      ),
    ).toBeUndefined();
    expect(costOf(usage({ output_token_details: { audio: 10 } }), row())).toBeUndefined();
  });

  it("rounds away float noise (12 significant digits)", () => {
    // 0.1 + 0.2 in dollars: 100k tokens at $1 and 200k at $1.
    const c = costOf(usage({ input_tokens: 100_000, output_tokens: 200_000, total_tokens: 300_000 }), row({ input: 1, output: 1 }))!;
    expect(c.total_cost).toBe(0.3);
    expect(roundUsd(0.1 + 0.2)).toBe(0.3);
    expect(roundUsd(1e-12 / 3)).toBe(3.33333333333e-13);
  });

  it("prices a real call: gpt-4o with cached input, claude-sonnet-4 with cache writes", () => {
    expect(
      costFor(
        usage({ input_tokens: 2000, output_tokens: 100, total_tokens: 2100, input_token_details: { cache_read: 1024 } }),
        "gpt-4o-2024-08-06",
      ),
    ).toEqual({
      input_cost: roundUsd(976 * 2.5e-6 + 1024 * 1.25e-6),
      output_cost: 0.001,
      total_cost: roundUsd(976 * 2.5e-6 + 1024 * 1.25e-6 + 0.001),
      input_cost_details: { cache_read: 0.00128 },
    });
    expect(
      costFor(
        usage({ input_tokens: 1100, output_tokens: 10, total_tokens: 1110, input_token_details: { cache_creation: 1000 } }),
        "claude-sonnet-4-20250514",
      ),
    ).toMatchObject({
      input_cost: roundUsd(100 * 3e-6 + 1000 * 3.75e-6),
      input_cost_details: { cache_creation: 0.00375 },
    });
  });

  it("adds the cost into usage in place, keeps the estimated mark, and passes strict validation", () => {
    const u = usage({ estimated: true });
    addCost(u, "gpt-4.1");
    expect(u).toEqual({
      input_tokens: 1000,
      output_tokens: 500,
      total_tokens: 1500,
      estimated: true,
      input_cost: 0.002,
      output_cost: 0.004,
      total_cost: 0.006,
    });
    const withDetails = usage({ input_token_details: { cache_read: 100 }, output_token_details: { reasoning: 50 } });
    addCost(withDetails, "o3");
    expect(withDetails.input_cost_details).toBeDefined();
    expect(validate([{ role: "assistant", content: [], usage_metadata: withDetails }], { strict: true })).toEqual([]);
  });

  it("keeps a cost the usage already has, and leaves unknown models and hostile objects alone", () => {
    const own = usage({ total_cost: 1 });
    addCost(own, "gpt-4o");
    expect(own).toEqual(usage({ total_cost: 1 }));
    const unknown = usage();
    addCost(unknown, "my-model");
    expect(unknown).toEqual(usage());
    const hostile = Object.defineProperty(usage(), "input_token_details", {
      get() {
        throw new Error("boom");
      },
      enumerable: true,
    });
    expect(() => addCost(hostile, "gpt-4o")).not.toThrow();
    expect(() => addCost(undefined, "gpt-4o")).not.toThrow();
  });
});

describe("your own prices", () => {
  it("registerPrices overrides a row and adds a model; resetPrices goes back to the table", () => {
    registerPrices([
      { model: "gpt-4o", input: 1, output: 2 },
      { model: "acme-large", aliases: ["acme-large-v1"], input: 4, output: 4, cached_input: 1 },
    ]);
    expect(priceFor("gpt-4o-2024-08-06")).toMatchObject({ input: 1, output: 2, provider: "custom" });
    expect(priceFor("acme/acme-large-v1")?.model).toBe("acme-large");
    // Later calls win.
    registerPrices([{ model: "acme-large", input: 5, output: 5 }]);
    expect(priceFor("acme-large")!.input).toBe(5);
    resetPrices();
    expect(priceFor("gpt-4o")!.input).toBe(2.5);
    expect(priceFor("acme-large")).toBeUndefined();
  });

  it("rejects a bad row with a ValidationError naming the row and field", () => {
    const bad = () =>
      registerPrices([{ model: "a", input: 1, output: 1 }, { model: "b", input: -1, output: 1 }, { model: "c", input: 1 } as never]);
    expect(bad).toThrow(ValidationError);
    try {
      bad();
    } catch (err) {
      const locs = (err as ValidationError).issues.map((i) => i.loc);
      expect(locs).toEqual([
        ["prices", 1, "input"],
        ["prices", 2, "output"],
      ]);
    }
    // Nothing of a rejected call is kept.
    expect(priceFor("a")).toBeUndefined();
  });

  it("loads a price file ({prices: [...]} or a bare array) over the table", () => {
    const dir = tempDir("tp-prices-");
    const file = join(dir, "prices.json");
    writeFileSync(
      file,
      JSON.stringify({
        prices: [
          {
            model: "claude-sonnet-4",
            input: 1,
            output: 1,
            cached_input: 0.1,
            cache_write: 1.5,
            source: "our contract",
            date: "2026-11-01",
          },
        ],
      }),
    );
    expect(loadPrices(file)).toBe(1);
    expect(priceFor("claude-sonnet-4-20250514")).toMatchObject({ input: 1, source: "our contract" });
    // Code wins over the file.
    registerPrices([{ model: "claude-sonnet-4", input: 7, output: 7 }]);
    expect(priceFor("claude-sonnet-4")!.input).toBe(7);
    const bare = join(dir, "bare.json");
    writeFileSync(bare, JSON.stringify([{ model: "x-model", input: 1, output: 2 }]));
    resetPrices();
    loadPrices(bare);
    expect(priceFor("x-model")!.output).toBe(2);
  });

  it("names the field of a bad price file: prices.<i>.<field>, unknown keys, bad JSON, missing file", () => {
    const dir = tempDir("tp-prices-");
    const issuesOf = (content: string | undefined): unknown => {
      const file = join(dir, `f${Math.random()}.json`);
      if (content !== undefined) writeFileSync(file, content);
      try {
        loadPrices(file);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).issues.map(({ loc, type }) => ({ loc, type }));
      }
      throw new Error("no error");
    };
    const rows = [0, 1, 2].map((i) => ({ model: `m${i}`, input: 1, output: 1 }));
    expect(issuesOf(JSON.stringify({ prices: [...rows, { model: "m3", input: 1, output: "2" }] }))).toEqual([
      { loc: ["prices", 3, "output"], type: "invalid_type" },
    ]);
    expect(issuesOf(JSON.stringify([{ model: "m", input: 1, output: 1, outptu: 2 }]))).toEqual([
      { loc: ["prices", 0], type: "unrecognized_keys" },
    ]);
    expect(issuesOf(JSON.stringify({ prices: [], models: [] }))).toEqual([{ loc: ["models"], type: "unrecognized_key" }]);
    expect(issuesOf("{not json")).toEqual([{ loc: ["prices"], type: "json_invalid" }]);
    expect(issuesOf(undefined)).toEqual([{ loc: ["prices"], type: "file_error" }]);
  });

  it("reads TRACEPIPE_PRICES at the first look-up; a bad file is a warning, never an exception", async () => {
    const dir = tempDir("tp-prices-");
    const file = join(dir, "env.json");
    writeFileSync(file, JSON.stringify([{ model: "env-model", input: 3, output: 3 }]));
    process.env.TRACEPIPE_PRICES = file;
    resetPrices();
    expect(priceFor("env-model")!.input).toBe(3);

    writeFileSync(file, JSON.stringify([{ model: "env-model", input: "free" }]));
    resetPrices();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      expect(priceFor("env-model")).toBeUndefined();
      expect(priceFor("gpt-4o")!.input).toBe(2.5);
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.join("\n")).toMatch(/TRACEPIPE_PRICES ignored: .*prices\.0\.input/);
  });
});

describe("roundUsd", () => {
  it("gives exactly Number(x.toPrecision(12)) on amounts of every size, near ties and powers of ten included", () => {
    const expected = (x: number) => (x === 0 ? 0 : Number(x.toPrecision(12)));
    const xs: number[] = [0, 1, -1, 0.1 + 0.2, 1e-12, 5e-13, 999999999999.5, 0.000018, 0.000036];
    const prices = [0.15, 0.6, 2.5, 10, 1.25, 0.075, 3, 15, 0.3, 1.1, 4.4, 0.0375, 75, 0.27, 3.75];
    for (const p of prices) for (let t = 0; t < 3000; t++) xs.push(t * p * 1e-6, (t * p + 0.5 * p) * 1e-6);
    let seed = 7;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let i = 0; i < 50_000; i++)
      xs.push(rnd() * 10 ** (Math.floor(rnd() * 24) - 14), -rnd() * 1e3, Math.round(rnd() * 1e12) / 1e12 + 5e-13);
    for (let k = -15; k < 10; k++) xs.push(10 ** k, 10 ** k * (1 - 1e-16), 10 ** k * (1 + 2e-16), 5 * 10 ** k);
    const wrong = xs.filter((x) => !Object.is(roundUsd(x) + 0, expected(x) + 0));
    expect(wrong).toEqual([]);
  });
});
