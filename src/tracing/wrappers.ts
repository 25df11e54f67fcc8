/**
 * wrapOpenAI(client) and wrapAnthropic(client): the same client object, with
 * its chat-completions / messages (and beta messages) `create` traced. The SDKs' helpers
 * (chat.completions.parse, chat.completions.stream(), messages.stream() with
 * finalMessage()) call `create` on the same resource, so they are traced too,
 * once each. wrapOpenAI also traces `responses.create` (its helpers
 * responses.parse and responses.stream() call it) with the openai-responses
 * adapter, `completions.create` (the legacy text completions) with the
 * openai-completions adapter, and `embeddings.create` as an `embedding` run.
 * A clone made with `client.withOptions(...)` is wrapped the same way.
 *
 * Only the request body and the response are recorded: API keys, headers and
 * the client object never enter a run.
 *
 * OpenAI streams report usage only when asked (`stream_options.include_usage`).
 * With `includeUsage: true` the wrapper asks for it, which adds one final chunk
 * with empty `choices` to what the caller reads; it is off by default so the
 * caller sees exactly the unwrapped stream, and usage is then estimated.
 */
import { openaiChat, anthropicMessages, openaiResponses, openaiCompletions } from "../../adapters/index.js";
import type { Adapter } from "../../adapters/types.js";
import { getDefaultClient } from "../ingest/default.js";
import { tracingEnabled, tracingOn } from "./context.js";
import { LlmCall, type WrapOptions } from "./llm.js";
import { patchEmbeddings, type CreateFn } from "./embeddings.js";
import { WRAPPED } from "../internal/wrapped.js";

export type { WrapOptions } from "./llm.js";

export interface OpenAIWrapOptions extends WrapOptions {
  /** Add `stream_options: {include_usage: true}` to streamed calls so usage is reported, not estimated. */
  includeUsage?: boolean;
}

function patchCreate(
  resource: { create: CreateFn } & Record<symbol, unknown>,
  adapter: Adapter,
  provider: string,
  defaultName: string,
  opts: WrapOptions,
  rewrite?: (body: Record<string, unknown>) => Record<string, unknown>,
): void {
  if (resource[WRAPPED]) return; // wrapping twice would trace every call twice
  const original = resource.create;
  const traced: CreateFn = function (this: unknown, body, options) {
    if (!tracingOn() || typeof body !== "object" || body === null) return original.call(this ?? resource, body, options);
    const sent = rewrite ? rewrite(body) : body;
    let call: LlmCall;
    try {
      call = new LlmCall(adapter, provider, body, opts.client ?? getDefaultClient(), opts, defaultName);
    } catch {
      // A run that cannot start (a processInputs that throws) leaves the call untraced, never failed.
      return original.call(this ?? resource, sent, options);
    }
    let promise: unknown;
    try {
      promise = original.call(this ?? resource, sent, options);
    } catch (err) {
      call.fail(err);
      throw err;
    }
    return call.observe(promise, body.stream === true);
  };
  Object.defineProperty(resource, "create", { value: traced, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(resource, WRAPPED, { value: true });
}

/**
 * `client.withOptions({...})` returns a new client of the same class, with resources of its
 * own that this wrapping never touched: the clone is wrapped as its parent was, so calls
 * made through it are traced too. Left alone when the client was wrapped already.
 */
function wrapClones(client: object, wrap: (clone: object) => object): void {
  const withOptions = (client as { withOptions?: unknown }).withOptions;
  if (typeof withOptions !== "function") return;
  const traced = function (this: unknown, ...args: unknown[]): unknown {
    const clone: unknown = withOptions.apply(this ?? client, args);
    if (typeof clone !== "object" || clone === null) return clone;
    try {
      return wrap(clone);
    } catch {
      return clone; // a clone that is not the shape we know goes back untraced, never failed
    }
  };
  Object.defineProperty(client, "withOptions", { value: traced, writable: true, configurable: true, enumerable: false });
}

export function wrapOpenAI<T extends object>(client: T, opts: OpenAIWrapOptions = {}): T {
  if (!tracingEnabled()) return client; // TRACEPIPE_TRACING=false: the client as it is, nothing added
  const completions = (client as { chat?: { completions?: { create: CreateFn } & Record<symbol, unknown> } }).chat?.completions;
  if (!completions || typeof completions.create !== "function")
    throw new TypeError("wrapOpenAI expects an OpenAI client (client.chat.completions.create)");
  if (!completions[WRAPPED]) wrapClones(client, (clone) => wrapOpenAI(clone, opts));
  const rewrite = opts.includeUsage
    ? (body: Record<string, unknown>) =>
        body.stream === true && !(body.stream_options as { include_usage?: boolean } | undefined)?.include_usage
          ? { ...body, stream_options: { ...(body.stream_options as object), include_usage: true } }
          : body
    : undefined;
  patchCreate(completions, openaiChat, "openai", "ChatOpenAI", opts, rewrite);
  // Older SDKs lack these resources; each is traced when present.
  const {
    responses,
    embeddings,
    completions: legacy,
  } = client as {
    responses?: { create?: CreateFn } & Record<symbol, unknown>;
    embeddings?: { create?: CreateFn } & Record<symbol, unknown>;
    completions?: { create?: CreateFn } & Record<symbol, unknown>;
  };
  // Responses streams always end with `response.completed` carrying usage: nothing to rewrite.
  if (responses && typeof responses.create === "function")
    patchCreate(responses as { create: CreateFn } & Record<symbol, unknown>, openaiResponses, "openai", "ChatOpenAI", opts);
  // Legacy completions stream usage like chat (only when asked), so the same rewrite applies.
  // The run is named after LangChain's legacy LLM class, `OpenAI`, as `ChatOpenAI` names chat runs.
  if (legacy && typeof legacy.create === "function")
    patchCreate(legacy as { create: CreateFn } & Record<symbol, unknown>, openaiCompletions, "openai", "OpenAI", opts, rewrite);
  if (embeddings && typeof embeddings.create === "function")
    patchEmbeddings(embeddings as { create: CreateFn } & Record<symbol, unknown>, opts);
  return client;
}

export function wrapAnthropic<T extends object>(client: T, opts: WrapOptions = {}): T {
  if (!tracingEnabled()) return client;
  const messages = (client as { messages?: { create: CreateFn } & Record<symbol, unknown> }).messages;
  if (!messages || typeof messages.create !== "function")
    throw new TypeError("wrapAnthropic expects an Anthropic client (client.messages.create)");
  if (!messages[WRAPPED]) wrapClones(client, (clone) => wrapAnthropic(clone, opts));
  patchCreate(messages, anthropicMessages, "anthropic", "ChatAnthropic", opts);
  // The beta resource (extended features: thinking variants, server tools, files) has a `create` of its
  // own, which its stream() and parse() call; its messages are the same format.
  const beta = (client as { beta?: { messages?: { create?: CreateFn } & Record<symbol, unknown> } }).beta?.messages;
  if (beta && typeof beta.create === "function")
    patchCreate(beta as { create: CreateFn } & Record<symbol, unknown>, anthropicMessages, "anthropic", "ChatAnthropic", opts);
  return client;
}
