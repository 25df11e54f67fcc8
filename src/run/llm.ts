/**
 * THE llm-run builder: every producer (the wrappers, span conversion, backfill,
 * the collector's OTLP path) turns an LLM call into a Run through these
 * functions, so they agree on what a run holds:
 * - native `inputs.messages` / `outputs.messages`;
 * - `trace_provider`, and `trace_model_name` = the response's model, else the
 *   request's (DESIGN "Mapping decisions"); for token estimation the model is
 *   looked up in SPEC §2.6's order (`resolveModel`);
 * - `invocation_params` when there are any (an empty object is left out);
 * - usage as the vendor reported it, else estimated and marked `estimated`;
 * - its cost when the model has a price (tokens/prices): computed once the
 *   tokens are known, so an estimate deferred to delivery is priced there
 *   too; costs from estimated tokens are marked by the same `estimated`;
 * - a `new_token` event at the first token of a stream;
 * - one validation policy: the same checks everywhere, and a producer chooses
 *   what an invalid record means for it (`reject`: a ValidationError, so
 *   backfill dead-letters the line; `annotate`: stored with the reasons in
 *   `extra.metadata.validation_errors`, because a live call must not be lost).
 */
import { getAdapter } from "../../adapters/index.js";
import type { RequestResult, ResponseResult } from "../../adapters/types.js";
import { prefixIssues, ValidationError, type Issue } from "../errors.js";
import type { Message, UsageMetadata } from "../format/schema.js";
import { validate } from "../format/validate.js";
import { detectFormat } from "../normalize.js";
import { estimateUsage, resolveModel } from "../tokens/index.js";
import { addCost } from "../tokens/prices/index.js";
import { dottedSegment, isoMicros } from "./ids.js";
import type { Run, RunEvent } from "./schema.js";
import type { Obj } from "../internal/obj.js";
import type { Loc } from "../internal/types.js";

/** Run names for LLM calls, by provider: what the wrappers and backfill call a run. */
const LLM_RUN_NAMES: Record<string, string> = {
  openai: "ChatOpenAI",
  anthropic: "ChatAnthropic",
  google: "ChatGoogleGenerativeAI",
  bedrock: "ChatBedrockConverse",
};

export function llmRunName(provider: string | undefined): string {
  return (provider && LLM_RUN_NAMES[provider]) || "llm";
}

/** What a producer knows about one LLM call, already in native terms. */
export interface NativeLlmCall {
  /** Native input messages (the prompt). */
  inputs?: Message[];
  /** Native output messages (the reply); absent when there was no reply. */
  outputs?: Message[];
  provider?: string;
  /** The model the response names. */
  responseModel?: string;
  /** The model the request asked for. */
  requestModel?: string;
  invocation_params?: Obj;
  /** Usage the vendor reported (when it is not already on the first output message). */
  usage?: UsageMetadata;
  /** When the first token arrived, microseconds since the epoch. */
  firstTokenUs?: number;
}

/** The request and response results of an adapter, as a NativeLlmCall. */
export function callFromResults(req: RequestResult | undefined, res: ResponseResult | undefined): NativeLlmCall {
  return {
    inputs: req?.messages,
    outputs: res?.messages,
    provider: res?.trace_provider ?? req?.trace_provider,
    responseModel: res?.trace_model_name,
    requestModel: req?.trace_model_name,
    invocation_params: req?.invocation_params,
    usage: res?.usage_metadata,
  };
}

function rethrowAt(err: unknown, prefix: Loc): never {
  if (err instanceof ValidationError) throw new ValidationError(prefixIssues(err.issues, prefix));
  throw err;
}

/**
 * A logged call in a vendor's shape (a request body, a response body or an
 * array of stream chunks) through the adapters, the format detected when not
 * given. Errors name where: `request.*`, `response.*`, or `format`.
 */
export function readVendorCall(rec: { format?: string; request?: unknown; response?: unknown }): { format?: string; call: NativeLlmCall } {
  const { request, response } = rec;
  let format = rec.format;
  if (!format && (request !== undefined || response !== undefined)) {
    try {
      format = detectFormat(request !== undefined && response !== undefined ? { request, response } : (request ?? response));
    } catch (err) {
      rethrowAt(err, []);
    }
  }
  if (!format) return { call: {} };
  const adapter = getAdapter(format);
  if (!adapter) throw new ValidationError([{ loc: ["format"], msg: `unknown format ${JSON.stringify(format)}`, type: "unknown_format" }]);
  let req: RequestResult | undefined;
  let res: ResponseResult | undefined;
  try {
    if (request !== undefined) req = adapter.normalizeRequest(request);
  } catch (err) {
    rethrowAt(err, ["request"]);
  }
  try {
    // The request tells the adapter what the reply leaves out (the audio format, say).
    const ctx = { request };
    if (response !== undefined)
      res = Array.isArray(response) ? adapter.normalizeStream(response, ctx) : adapter.normalizeResponse(response, ctx);
  } catch (err) {
    rethrowAt(err, ["response"]);
  }
  return { format, call: callFromResults(req, res) };
}

/**
 * How a producer treats messages that fail `validate`. `later` is for the
 * first half of a call that is checked whole when it completes (the wrappers).
 */
export type ValidationPolicy = "reject" | "annotate" | "later";
/** When usage is estimated when the vendor reported none: now, deferred to delivery, or never. */
export type EstimatePolicy = "now" | "defer" | "never";

/** The llm-specific fields of a run, and the deferred estimate when one was asked for. */
export interface LlmFields {
  inputs: { messages: Message[] };
  outputs?: { messages: Message[] };
  /** To merge into `extra.metadata`. */
  metadata: Obj;
  events: RunEvent[];
  /** Fills the first output message's usage with an estimate; for `estimate: "defer"`. */
  estimate?: () => void;
}

export interface LlmOptions {
  validation: ValidationPolicy;
  estimate: EstimatePolicy;
  /** Inputs as the caller recorded them, for SPEC §2.6's model look-up (`inputs.model`, `inputs.model_name`). */
  rawInputs?: Obj;
  /** Leave `invocation_params` out of the metadata: the reply half of a call whose request half recorded them. */
  withoutParams?: boolean;
}

/** Cost into a usage object for a model, unless it has one (see tokens/prices); for producers outside this builder (the store, embeddings). */
export { addCost } from "../tokens/prices/index.js";

/** The model identification of a call: SPEC §2.6 / DESIGN's rule. */
export function modelOf(call: NativeLlmCall): string | undefined {
  return call.responseModel ?? call.requestModel;
}

/** What `validate` finds in a call's messages, prompt then reply, located under `messages`. */
export function messageIssues(inputs: Message[], outputs?: Message[]): Issue[] {
  // A loop, not concat: Array.prototype.concat's generic path cost 3x as much on a span's few messages.
  let all = inputs;
  if (outputs?.length) {
    all = inputs.slice();
    for (let i = 0; i < outputs.length; i++) all.push(outputs[i]!);
  }
  return prefixIssues(validate(all), ["messages"]);
}

export function llmFields(call: NativeLlmCall, opts: LlmOptions): LlmFields {
  const inputs = call.inputs ?? [];
  const outputs = call.outputs;
  const metadata: Obj = {};
  if (call.provider) metadata.trace_provider = call.provider;
  const model = modelOf(call);
  if (model) metadata.trace_model_name = model;
  if (!opts.withoutParams && call.invocation_params && Object.keys(call.invocation_params).length)
    metadata.invocation_params = call.invocation_params;

  const problems = opts.validation === "later" ? [] : messageIssues(inputs, outputs);
  if (problems.length) {
    if (opts.validation === "reject") throw new ValidationError(problems);
    metadata.validation_errors = problems;
  }

  const first = outputs?.[0];
  if (first && !first.usage_metadata && call.usage) first.usage_metadata = call.usage;
  // Priced by the model SPEC §2.6 names (the response's, else the request's, else the raw inputs').
  const priceModel = resolveModel({ extra: { metadata }, inputs: opts.rawInputs });
  addCost(first?.usage_metadata, priceModel);
  let estimate: (() => void) | undefined;
  if (first && !first.usage_metadata && opts.estimate !== "never") {
    const provider = call.provider;
    estimate = () => {
      if (first.usage_metadata) return;
      first.usage_metadata = estimateUsage({ model: priceModel, provider, inputs, outputs: outputs! });
      addCost(first.usage_metadata, priceModel);
    };
    if (opts.estimate === "now") {
      estimate();
      estimate = undefined;
    }
  }
  const events: RunEvent[] = call.firstTokenUs !== undefined ? [{ name: "new_token", time: isoMicros(call.firstTokenUs) }] : [];
  const fields: LlmFields = { inputs: { messages: inputs }, metadata, events };
  if (outputs) fields.outputs = { messages: outputs };
  if (estimate) fields.estimate = estimate;
  return fields;
}

/** Where a run sits: its id, its trace, its parent and its dotted order. Roots omit all but `id`. */
export interface Placement {
  id: string;
  traceId?: string;
  parentId?: string;
  dottedOrder?: string;
}

/** The parts every Run has, whoever makes it. Times in microseconds since the epoch. */
export interface RunBase {
  at: Placement;
  name: string;
  run_type: string;
  startUs: number;
  endUs?: number;
  inputs?: Obj;
  outputs?: Obj;
  error?: string;
  events?: RunEvent[];
  tags?: string[];
  metadata?: Obj;
  /** Other members of `extra` besides metadata (e.g. `config`). */
  extra?: Obj;
  project?: string;
}

/** A complete Run record (a post) from its parts. The end time never precedes the start. */
export function buildRun(b: RunBase): Run {
  const id = b.at.id;
  const run: Run = {
    id,
    trace_id: b.at.traceId ?? id,
    dotted_order: b.at.dottedOrder ?? dottedSegment(b.startUs, id),
    name: b.name,
    run_type: b.run_type,
    start_time: isoMicros(b.startUs),
    inputs: b.inputs ?? {},
    events: b.events ?? [],
    tags: b.tags ?? [],
    // Object.assign, not `{...b.extra, metadata}`: V8 (Node 20) takes a slow path for a spread followed by fields.
    extra: Object.assign({}, b.extra, { metadata: b.metadata ?? {} }),
  };
  if (b.endUs !== undefined) run.end_time = isoMicros(Math.max(b.endUs, b.startUs));
  if (b.at.parentId) run.parent_run_id = b.at.parentId;
  if (b.outputs !== undefined) run.outputs = b.outputs;
  if (b.error !== undefined) run.error = b.error;
  if (b.project) run.session_name = b.project;
  return run;
}

/** A whole `llm` run from a call: buildRun + llmFields. `metadata` given by the producer is kept under the llm fields. */
export function llmRun(
  call: NativeLlmCall,
  base: Omit<RunBase, "run_type" | "inputs" | "outputs" | "name"> & { name?: string },
  opts: LlmOptions,
): { run: Run; estimate?: () => void } {
  const f = llmFields(call, opts);
  // Object.assign rather than `{...base, fields}` (see buildRun).
  const run = buildRun(
    Object.assign({}, base, {
      name: base.name ?? llmRunName(call.provider),
      run_type: "llm",
      inputs: f.inputs,
      outputs: f.outputs,
      events: [...(base.events ?? []), ...f.events],
      metadata: { ...base.metadata, ...f.metadata },
    }),
  );
  return { run, estimate: f.estimate };
}
