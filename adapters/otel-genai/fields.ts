/**
 * What both GenAI conventions (current and legacy) and the log events share:
 * roles, usage, provider names, request parameters and the run type.
 */
import { ValidationError, type Issue } from "../../src/errors.js";
import type { Message, UsageMetadata } from "../../src/format/schema.js";
import { attrJson } from "../common/attrs.js";
import { checkedUsage, fail, type Loc } from "../common/guards.js";
import type { Attributes, SpanRunType } from "../spans.js";

const ROLES = new Set(["system", "user", "assistant", "tool"]);

export const num = (attrs: Attributes, ...keys: string[]): number | undefined => {
  for (const k of keys) {
    const v = attrs[k];
    if (typeof v === "number" && Number.isFinite(v)) return v;
    if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  }
  return undefined;
};
export const text = (attrs: Attributes, ...keys: string[]): string | undefined => {
  for (const k of keys) if (typeof attrs[k] === "string" && attrs[k] !== "") return attrs[k];
  return undefined;
};

/** The role at `loc` (plus `key` when given: the location is built only for an error). */
export function role(raw: unknown, loc: Loc, key?: string): { role: Message["role"]; vendor?: string } {
  if (typeof raw !== "string") fail(key === undefined ? loc : [...loc, key], "expected a role", "string_type");
  if (ROLES.has(raw)) return { role: raw as Message["role"] };
  if (raw === "developer") return { role: "system", vendor: raw };
  // An unknown role keeps its name; its content is still the user's side of the turn.
  return { role: "user", vendor: raw };
}

/**
 * Emitters whose input count is Anthropic's own `input_tokens`, the uncached
 * part only (and their total that plus output): OpenLLMetry's JS Anthropic
 * instrumentation. Semconv, and the Anthropic SDK's own telemetry, count cache
 * reads and writes in, as DESIGN's Anthropic usage does.
 */
const UNCACHED_INPUT_SCOPES = new Set(["@traceloop/instrumentation-anthropic"]);

export function usage(attrs: Attributes, scope: string | undefined): UsageMetadata | undefined {
  let input = num(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens");
  const output = num(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens");
  if (input === undefined && output === undefined) return undefined;
  const cacheRead = num(attrs, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens");
  const cacheCreation = num(
    attrs,
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
  );
  const uncached = scope !== undefined && UNCACHED_INPUT_SCOPES.has(scope) && input !== undefined;
  if (uncached) input = input! + (cacheRead ?? 0) + (cacheCreation ?? 0);
  // The emitter's own total left the cache out too: recount it.
  const total = uncached ? undefined : num(attrs, "gen_ai.usage.total_tokens", "llm.usage.total_tokens");
  const u: UsageMetadata = { input_tokens: input ?? 0, output_tokens: output ?? 0, total_tokens: total ?? (input ?? 0) + (output ?? 0) };
  const reasoning = num(attrs, "gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens");
  if (cacheRead !== undefined || cacheCreation !== undefined)
    u.input_token_details = {
      ...(cacheRead !== undefined ? { cache_read: cacheRead } : {}),
      ...(cacheCreation !== undefined ? { cache_creation: cacheCreation } : {}),
    };
  if (reasoning !== undefined) u.output_token_details = { reasoning };
  return checkedUsage(u, ["gen_ai.usage"]);
}

/** Provider names as the rest of tracepipe spells them (`openai`, `anthropic`, ...). */
export function providerName(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const p = raw.trim().toLowerCase();
  if (p === "az.ai.openai" || p === "azure.ai.openai" || p === "azure_openai" || p === "azure") return "azure_openai";
  if (p === "aws.bedrock") return "bedrock";
  if (p === "gcp.vertex_ai" || p === "gcp.gen_ai" || p === "gcp.gemini") return "google";
  return p;
}

const PARAMS: Record<string, string> = {
  "gen_ai.request.temperature": "temperature",
  "gen_ai.request.max_tokens": "max_tokens",
  "gen_ai.request.top_p": "top_p",
  "gen_ai.request.top_k": "top_k",
  "gen_ai.request.frequency_penalty": "frequency_penalty",
  "gen_ai.request.presence_penalty": "presence_penalty",
  "gen_ai.request.stop_sequences": "stop",
  "gen_ai.request.seed": "seed",
  "gen_ai.request.choice.count": "n",
  "gen_ai.request.encoding_formats": "encoding_formats",
  "gen_ai.output.type": "output_type",
  "llm.is_streaming": "stream",
};

/** PARAMS as pairs, made once: every LLM span reads them. */
const PARAM_PAIRS = Object.entries(PARAMS);

export function invocationParams(attrs: Attributes): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, name] of PARAM_PAIRS) if (attrs[k] !== undefined && attrs[k] !== null) out[name] = attrs[k];
  const tools = attrs["gen_ai.tool.definitions"];
  if (tools !== undefined) out.tools = typeof tools === "string" ? attrJson(attrs, "gen_ai.tool.definitions") : tools;
  return out;
}

/** Operations that are one model call; everything else named (agents, steps, workflows) is a chain. */
const LLM_OPS = new Set(["chat", "text_completion", "generate_content", "completion", "responses"]);

export function runType(attrs: Attributes): SpanRunType {
  const op = text(attrs, "gen_ai.operation.name") ?? text(attrs, "llm.request.type");
  if (op === undefined || LLM_OPS.has(op)) return "llm"; // legacy spans name no operation: they are model calls
  if (op === "embeddings" || op === "embedding") return "embedding";
  if (op === "execute_tool") return "tool";
  return "chain"; // invoke_agent, create_agent, agent_step (AI SDK v7), invoke_workflow, ...
}

/** `fn`'s value, or undefined with its issues pushed onto `issues` when what it reads is malformed. */
export function attempt<T>(issues: Issue[], fn: () => T): T | undefined {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    issues.push(...err.issues);
    return undefined;
  }
}
