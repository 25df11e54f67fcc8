/**
 * Which price row a model name means. Pure, no I/O.
 *
 * The name is looked up exactly, then in successively normalised forms, each
 * looked up exactly again, and the first hit wins:
 *   1. lower case, trimmed;
 *   2. the last path segment (`models/gemini-2.5-flash`, `openai/gpt-4o`,
 *      a Vertex resource name);
 *   3. Bedrock and Vertex ids for Claude: the region and `anthropic.` prefix,
 *      the `-v2:0` version and the `@20241022` date go
 *      (`us.anthropic.claude-3-5-sonnet-20241022-v2:0`, `claude-sonnet-4@20250514`);
 *   4. `-latest`;
 *   5. a dated snapshot suffix: `-2024-08-06` (OpenAI), `-20241022`
 *      (Anthropic), `-001` (Gemini's stable versions).
 * Never a prefix match: `gpt-4o-mini` is not `gpt-4o`, `o1-mini` not `o1`,
 * `gemini-2.5-flash-preview-05-20` (priced unlike the release) nothing. A row
 * for a dated name itself (`gpt-4o-2024-05-13`) wins over its alias because
 * every form is looked up before the next is made.
 */
import type { ModelPrice } from "./table.js";

/**
 * Rows by every name they answer to (model and aliases), lower case. Later rows
 * win; a later row for the same model also takes over the earlier row's
 * aliases, so overriding `claude-sonnet-4` prices `claude-sonnet-4-20250514` too.
 */
export function indexPrices(rows: readonly ModelPrice[]): Map<string, ModelPrice> {
  const byModel = new Map<string, { row: ModelPrice; names: Set<string> }>();
  for (const r of rows) {
    const key = r.model.trim().toLowerCase();
    const names = byModel.get(key)?.names ?? new Set<string>();
    names.add(key);
    for (const a of r.aliases ?? []) names.add(a.trim().toLowerCase());
    byModel.delete(key);
    byModel.set(key, { row: r, names });
  }
  const index = new Map<string, ModelPrice>();
  // In order of last definition, so a later model's alias wins over an earlier model's name.
  for (const { row, names } of byModel.values()) for (const n of names) index.set(n, row);
  return index;
}

const CLAUDE_CLOUD_PREFIX = /^(?:[a-z]{2,6}\.)?anthropic\./;
const CLAUDE_CLOUD_SUFFIX = /(?:@\d{8}|-v\d+(?::\d+)?)$/;
const LATEST = /-latest$/;
const OPENAI_DATE = /-\d{4}-\d{2}-\d{2}$/;
const ANTHROPIC_DATE = /-\d{8}$/;
const GEMINI_VERSION = /^(gemini-.*)-\d{3}$/;

/** The forms of a name in the order they are tried (deduplicated). */
export function nameForms(model: string): string[] {
  const forms: string[] = [];
  const add = (s: string) => {
    if (s && forms[forms.length - 1] !== s) forms.push(s);
  };
  let n = model.trim().toLowerCase();
  add(n);
  n = n.slice(n.lastIndexOf("/") + 1);
  add(n);
  if (CLAUDE_CLOUD_PREFIX.test(n) || n.startsWith("claude-")) {
    n = n.replace(CLAUDE_CLOUD_PREFIX, "");
    // `-v2:0` then `@date`, or `@date` alone; twice covers Vertex's `claude-3-5-sonnet-v2@20241022`.
    n = n.replace(CLAUDE_CLOUD_SUFFIX, "").replace(CLAUDE_CLOUD_SUFFIX, "");
    add(n);
  }
  n = n.replace(LATEST, "");
  add(n);
  n = n.replace(OPENAI_DATE, "").replace(ANTHROPIC_DATE, "").replace(GEMINI_VERSION, "$1");
  add(n);
  return forms;
}

/** The row for a model name, or undefined when none matches (unknown models get no cost). */
export function matchPrice(model: unknown, index: ReadonlyMap<string, ModelPrice>): ModelPrice | undefined {
  if (typeof model !== "string" || !model.trim() || model.length > 256) return undefined;
  for (const form of nameForms(model)) {
    const hit = index.get(form);
    if (hit) return hit;
  }
  return undefined;
}
