/**
 * `embeddings.create` as an `embedding` run. Inputs: the input texts (or token
 * arrays), the model, `dimensions` and `encoding_format` when given. Outputs:
 * how many vectors came back and their dimension, never the vectors (thousands
 * of floats each, unreadable in a trace and the bulk of the run's size), plus
 * usage from `usage.prompt_tokens` (with its cost when the model has a price). The caller gets exactly what the SDK returned.
 */
import type { UsageMetadata } from "../format/schema.js";
import { getDefaultClient } from "../ingest/default.js";
import { addCost } from "../tokens/prices/index.js";
import { tracingOn } from "./context.js";
import type { WrapOptions } from "./llm.js";
import { noteUnparsed, watchApiPromise } from "./api-promise.js";
import { startRun } from "./traceable.js";
import type { Obj } from "../internal/obj.js";
import { WRAPPED } from "../internal/wrapped.js";

export type CreateFn = (body: Record<string, unknown>, options?: unknown) => unknown;
const INPUT_KEYS = ["input", "model", "dimensions", "encoding_format"];

/** Vector length: a float array's length, or a base64 float32 string's byte count / 4. */
function dimensionOf(embedding: unknown): number | undefined {
  if (Array.isArray(embedding)) return embedding.length;
  if (typeof embedding === "string") return Math.floor(Buffer.byteLength(embedding, "base64") / 4);
  return undefined;
}

export function embeddingOutputs(value: unknown): { outputs: Obj; model?: string } {
  const v = (value ?? {}) as Obj;
  const data = Array.isArray(v.data) ? (v.data as Obj[]) : [];
  const outputs: Obj = { embeddings: data.length };
  const dim = dimensionOf(data[0]?.embedding);
  if (dim !== undefined) outputs.dimensions = dim;
  const u = v.usage as Obj | undefined;
  if (u && typeof u.prompt_tokens === "number") {
    const usage: UsageMetadata = {
      input_tokens: u.prompt_tokens,
      output_tokens: 0,
      total_tokens: typeof u.total_tokens === "number" ? u.total_tokens : u.prompt_tokens,
    };
    // Embedding models are in the price table too (input only).
    addCost(usage, typeof v.model === "string" ? v.model : undefined);
    outputs.usage_metadata = usage;
  }
  return { outputs, model: typeof v.model === "string" ? v.model : undefined };
}

export function patchEmbeddings(resource: { create: CreateFn } & Record<symbol, unknown>, opts: WrapOptions): void {
  if (resource[WRAPPED]) return;
  const original = resource.create;
  const traced: CreateFn = function (this: unknown, body, options) {
    if (!tracingOn() || typeof body !== "object" || body === null) return original.call(this ?? resource, body, options);
    let inputs: Obj = {};
    for (const k of INPUT_KEYS) if (body[k] !== undefined) inputs[k] = body[k];
    if (opts.processInputs) inputs = opts.processInputs(inputs);
    const metadata: Obj = { ...opts.metadata, trace_provider: "openai" };
    if (typeof body.model === "string") metadata.trace_model_name = body.model;
    const params: Obj = {};
    for (const k in body) if (!INPUT_KEYS.includes(k) && body[k] !== undefined) params[k] = body[k];
    if (Object.keys(params).length) metadata.invocation_params = params;
    const { run, finish } = startRun(
      opts.client ?? getDefaultClient(),
      { name: opts.name ?? "OpenAIEmbeddings", run_type: "embedding", inputs, metadata, tags: opts.tags, project: opts.project },
      opts.processOutputs,
    );
    let promise: unknown;
    try {
      promise = original.call(this ?? resource, body, options);
    } catch (err) {
      finish(undefined, err);
      throw err;
    }
    return watchApiPromise(
      promise,
      (value) => {
        try {
          const { outputs, model } = embeddingOutputs(value);
          if (model !== undefined) run.metadata.trace_model_name = model;
          finish(outputs);
        } catch (err) {
          finish(undefined, err); // never into the caller's result
        }
      },
      (err) => finish(undefined, err),
      (response) => finish(undefined, undefined, noteUnparsed(response)),
    );
  };
  Object.defineProperty(resource, "create", { value: traced, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(resource, WRAPPED, { value: true });
}
