/**
 * Prices in effect: the table in the repo (table.ts), under a price file
 * (TRACEPIPE_PRICES, or `--prices` / loadPrices()), under prices registered
 * in code (registerPrices()). A later layer wins for the names it gives, and
 * may add models the table lacks.
 *
 * A price file is JSON: an array of rows, or `{"prices": [rows]}`. A row is
 * `{model, input, output}` (USD per million tokens) plus any of
 * `provider, aliases, cached_input, cache_write, cache_write_1h, input_audio,
 * reasoning, long_context, source, date, note` (table.ts says what each means).
 * A bad row is a ValidationError naming it: `loc: ["prices", 3, "output"]`.
 *
 * The environment's file is read on the first price look-up, not at import,
 * so importing tracepipe does no I/O. Tracing never throws into the app: a
 * bad TRACEPIPE_PRICES file is reported once as a process warning and the
 * other layers stay in effect (the CLI reads it up front and exits 2 instead).
 */
import { readFileSync } from "node:fs";
import {
  array,
  gte,
  int,
  maxLength,
  minLength,
  number,
  optional,
  strictObject,
  string,
  trim,
  type input as Input,
  type ZodMiniArray,
} from "zod/mini";
import "../../internal/zod-english.js";
import { envValue } from "../../env.js";
import { ConfigError, ValidationError, zodIssues, type Issue } from "../../errors.js";
import type { UsageMetadata } from "../../format/schema.js";
import { costOf, type CostFields } from "./cost.js";
import { indexPrices, matchPrice } from "./match.js";
import { PRICE_TABLE, type ModelPrice } from "./table.js";

export { PRICE_TABLE, type ModelPrice, type LongContextPrice } from "./table.js";
export { costOf, roundUsd, type CostFields } from "./cost.js";
export { matchPrice, nameForms, indexPrices } from "./match.js";

/** The schema of a row, built on first use: importing tracepipe builds no schema it may never check against. */
function priceRowSchema() {
  const rate = number().check(gte(0));
  /** The rates a row and its long-context tier share (USD per million tokens). */
  const TIER_RATES = {
    input: rate,
    output: rate,
    cached_input: optional(rate),
    cache_write: optional(rate),
    cache_write_1h: optional(rate),
    input_audio: optional(rate),
  };
  const LongContext = strictObject({ above_input_tokens: number().check(int(), gte(0)), ...TIER_RATES });
  const name = () => string().check(trim(), minLength(1), maxLength(256));
  return strictObject({
    provider: optional(string().check(minLength(1))),
    model: name(),
    aliases: optional(array(name())),
    ...TIER_RATES,
    reasoning: optional(rate),
    long_context: optional(LongContext),
    source: optional(string()),
    date: optional(string()),
    note: optional(string()),
  });
}
type PriceRowSchema = ReturnType<typeof priceRowSchema>;
let priceRows: ZodMiniArray<PriceRowSchema> | undefined;

/** A price a user gives: like a table row, with `provider`, `source` and `date` optional. */
export type PriceInput = Input<PriceRowSchema>;

/** Rows checked, or a ValidationError whose issues start at `["prices", i, field]`. */
export function parsePrices(rows: unknown): ModelPrice[] {
  priceRows ??= array(priceRowSchema());
  const parsed = priceRows.safeParse(rows);
  if (!parsed.success) throw new ValidationError(zodIssues(parsed.error.issues, ["prices"]));
  return parsed.data.map((r) => ({ ...r, provider: r.provider ?? "custom" }));
}

/** A price file's rows (see the module comment). Errors are ConfigErrors located under `prices`. */
export function readPricesFile(path: string): ModelPrice[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError([{ loc: ["prices"], msg: `cannot read the price file ${path}: ${(err as Error).message}`, type: "file_error" }]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError([
      { loc: ["prices"], msg: `the price file ${path} is not JSON: ${(err as Error).message}`, type: "json_invalid" },
    ]);
  }
  let rows: unknown = json;
  if (json !== null && typeof json === "object" && !Array.isArray(json)) {
    const extra = Object.keys(json).filter((k) => k !== "prices");
    if (extra.length)
      throw new ConfigError(
        extra.map((k): Issue => ({
          loc: [k],
          msg: `unknown field ${JSON.stringify(k)}; a price file is an array of prices or {"prices": [...]}`,
          type: "unrecognized_key",
        })),
      );
    rows = (json as { prices?: unknown }).prices;
    if (rows === undefined) throw new ConfigError([{ loc: ["prices"], msg: "a price file needs a prices array", type: "missing" }]);
  }
  try {
    return parsePrices(rows);
  } catch (err) {
    if (err instanceof ValidationError) throw new ConfigError(err.issues, `${path}: ${err.message}`);
    throw err;
  }
}

let fileRows: readonly ModelPrice[] = [];
let codeRows: readonly ModelPrice[] = [];
let envRead = false;
let index: Map<string, ModelPrice> | undefined;
/** Names already looked up in the current index (a process sees few models, each many times). */
const memo = new Map<string, ModelPrice | null>();
const MEMO_MAX = 4096;

function current(): Map<string, ModelPrice> {
  if (!envRead) {
    envRead = true;
    const path = envValue("TRACEPIPE_PRICES");
    if (path) {
      try {
        fileRows = readPricesFile(path);
      } catch (err) {
        process.emitWarning(`TRACEPIPE_PRICES ignored: ${(err as Error).message}`, "TracepipeWarning");
      }
    }
  }
  if (!index) {
    index = indexPrices([...PRICE_TABLE, ...fileRows, ...codeRows]);
    memo.clear();
  }
  return index;
}

/**
 * Add or override prices from code; later calls win for the names they give.
 * Throws a ValidationError naming the row and field (`["prices", 0, "input"]`).
 */
export function registerPrices(rows: readonly PriceInput[]): void {
  const checked = parsePrices(rows);
  codeRows = [...codeRows, ...checked];
  index = undefined;
}

/**
 * Use a price file (JSON, see above) in place of TRACEPIPE_PRICES's; what `--prices` does.
 * Returns how many rows it had. Throws a ConfigError naming the row and field.
 */
export function loadPrices(path: string): number {
  const rows = readPricesFile(path);
  fileRows = rows;
  envRead = true;
  index = undefined;
  return rows.length;
}

/** Back to the table alone; TRACEPIPE_PRICES is read again at the next look-up. */
export function resetPrices(): void {
  fileRows = [];
  codeRows = [];
  envRead = false;
  index = undefined;
}

/** The price in effect for a model name (dated ids, aliases, provider prefixes resolved), or undefined. */
export function priceFor(model: string | undefined): ModelPrice | undefined {
  const idx = current();
  if (typeof model !== "string") return undefined;
  const known = memo.get(model);
  if (known !== undefined) return known ?? undefined;
  const found = matchPrice(model, idx);
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(model, found ?? null);
  return found;
}

/** The cost of a usage for a model, or undefined when the model (or part of the usage) has no price. */
export function costFor(usage: UsageMetadata, model: string | undefined): CostFields | undefined {
  const price = priceFor(model);
  return price ? costOf(usage, price) : undefined;
}

/**
 * Put the cost into a usage object in place, unless it already has one (a
 * producer's or vendor's own figure is kept). Never throws: a usage that
 * cannot be priced is left as it was.
 */
export function addCost(usage: UsageMetadata | undefined, model: string | undefined): void {
  try {
    if (
      !usage ||
      typeof usage !== "object" ||
      usage.total_cost !== undefined ||
      usage.input_cost !== undefined ||
      usage.output_cost !== undefined
    )
      return;
    const cost = costFor(usage, model);
    if (cost) Object.assign(usage, cost);
  } catch {
    // A usage object a hostile producer made unreadable (a throwing getter) keeps no cost.
  }
}
