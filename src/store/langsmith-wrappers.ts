/**
 * What the `langsmith` SDK's own client wrappers (`langsmith/wrappers`:
 * `wrapOpenAI`, `wrapAnthropic`) change in the vendor payloads they log, undone
 * so the payloads read as the vendor's:
 * - the reply's `usage` is replaced by LangSmith's `usage_metadata` (the native
 *   usage shape already): taken off the reply, and handed back as the reply's
 *   usage when the reply has none of its own;
 * - an Anthropic reply is logged without its `type: "message"`;
 * - an Anthropic request's `system` is logged as `system` messages at the head
 *   of `messages`: it is the request's `system` again.
 * Only payloads that say they are such a wrapper's (LangSmith's `ls_provider`
 * in metadata, a reply object carrying `usage_metadata`) are touched.
 */
import type { UsageMetadata } from "../format/schema.js";
import { isObj, type Obj } from "../internal/obj.js";

export interface Unwrapped {
  request: unknown;
  response: unknown;
  /** LangSmith's usage of the reply, in the native shape, when the reply carried it. */
  usage?: UsageMetadata;
}

const count = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;

/** LangSmith's `usage_metadata` as native usage: the three counts, and the details that are counts. */
function nativeUsage(u: unknown): UsageMetadata | undefined {
  if (!isObj(u) || !count(u.input_tokens) || !count(u.output_tokens)) return undefined;
  const out: UsageMetadata = {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    total_tokens: count(u.total_tokens) ? u.total_tokens : u.input_tokens + u.output_tokens,
  };
  const details = (d: unknown): Record<string, number> | undefined => {
    if (!isObj(d)) return undefined;
    const kept: Record<string, number> = {};
    for (const [k, v] of Object.entries(d)) if (count(v)) kept[k] = v;
    return Object.keys(kept).length ? kept : undefined;
  };
  const input = details(u.input_token_details);
  // Anthropic's cache writes, by how long they live: together they are the cache_creation count.
  if (input && input.cache_creation === undefined) {
    const writes = (input.ephemeral_5m_input_tokens ?? 0) + (input.ephemeral_1hr_input_tokens ?? 0);
    if (writes > 0) input.cache_creation = writes;
  }
  const output = details(u.output_token_details);
  if (input) out.input_token_details = input;
  if (output) out.output_token_details = output;
  return out;
}

/** An Anthropic request whose leading `system` messages are its `system` again. */
function anthropicRequest(req: Obj): Obj {
  if (req.system !== undefined || !Array.isArray(req.messages)) return req;
  const lead = req.messages.findIndex((m) => !(isObj(m) && m.role === "system"));
  const n = lead === -1 ? req.messages.length : lead;
  if (n === 0) return req;
  const system = req.messages.slice(0, n) as Obj[];
  const texts = system.map((m) => m.content);
  return {
    ...req,
    system: texts.length === 1 ? texts[0] : texts.flatMap((c) => (typeof c === "string" ? [{ type: "text", text: c }] : c)),
    messages: req.messages.slice(n),
  };
}

export function unwrapLangSmith(request: unknown, response: unknown, metadata: Obj | undefined): Unwrapped {
  const provider = metadata?.ls_provider;
  if (!isObj(response) || !("usage_metadata" in response) || "generations" in response || typeof provider !== "string")
    return { request, response };
  const { usage_metadata: usageMetadata, ...reply } = response;
  const out: Unwrapped = { request, response: reply, usage: nativeUsage(usageMetadata) };
  if (provider === "anthropic") {
    if (reply.type === undefined && reply.role === "assistant" && Array.isArray(reply.content))
      out.response = { type: "message", ...reply };
    if (isObj(request)) out.request = anthropicRequest(request);
  }
  return out;
}
