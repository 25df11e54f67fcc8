/**
 * `--prices FILE` for the commands that price runs (backfill, serve). The
 * file, else TRACEPIPE_PRICES, is read before any work starts, so a bad one
 * stops the command with exit 2 and every problem named
 * (`prices.3.output: ...`) instead of being skipped with a warning as the
 * library does.
 */
import { envValue } from "../env.js";
import { loadPrices } from "../tokens/prices/index.js";

export const PRICES_OPTION_HELP =
  "JSON price file (USD per million tokens) that adds to or overrides the built-in table (default TRACEPIPE_PRICES)";

/** Loads the price file in effect, if any. Throws the ConfigError of a bad file. */
export function usePriceFile(option: string | undefined): void {
  const path = option ?? envValue("TRACEPIPE_PRICES");
  if (path) loadPrices(path);
}
