/**
 * LangChain adapter: LangChain's own serialized messages and llm-run payloads
 * (JS `@langchain/core` and Python `langchain_core`) -> native messages. Pure
 * functions; throws only NormalizeError.
 *
 * A request is a run's `inputs` (`{messages: [[...]]}` or `{prompts: [...]}`) or
 * a list of messages; a response is its `outputs` (`{generations, llm_output}`),
 * a generation or an AI message; a stream is a list of AI message chunks.
 * LangChain names no provider in the messages of a request; a reply names it in
 * `response_metadata.model_provider` when the integration says. LangSmith's
 * `ls_provider` / `ls_model_name` run metadata is the run builder's to read
 * (src/run/langsmith.ts), not the payload's.
 */
import type { Adapter, NormalizedRecord, RequestResult, ResponseResult } from "../types.js";
import { adapterOf } from "../common/adapter.js";
import { expectObj, fail, under } from "../common/guards.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./inputs.js";
import { normalizeResponse } from "./outputs.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { messagesToNative } from "./messages.js";
export { blockToNative } from "./blocks.js";
export { messageUsage } from "./usage.js";

export const FORMAT = "langchain";

function replyOrStream(v: unknown): ResponseResult {
  return Array.isArray(v) ? normalizeStream(v) : normalizeResponse(v);
}

export function normalize(payload: unknown): NormalizedRecord {
  const out: NormalizedRecord = { format: FORMAT, metadata: {} };
  let req: RequestResult | undefined;
  let res: ResponseResult | undefined;
  const kind = detect(payload);
  if (kind === "stream") res = normalizeStream(payload as unknown[]);
  else if (Array.isArray(payload)) req = normalizeRequest(payload);
  else {
    const p = expectObj(payload, []);
    if ("request" in p || "response" in p) {
      const { request, response } = p;
      if (request !== undefined && request !== null) req = under("request", () => normalizeRequest(request));
      if (response !== undefined && response !== null) res = under("response", () => replyOrStream(response));
      if (!req && !res) fail([], "a {request, response} record needs at least one of them", "missing");
    } else if ("messages" in p || "prompts" in p) req = normalizeRequest(p);
    else res = normalizeResponse(p);
  }
  if (req) out.inputs = { messages: req.messages };
  if (res) out.outputs = { messages: res.messages };
  const provider = res?.trace_provider ?? req?.trace_provider;
  const model = res?.trace_model_name ?? req?.trace_model_name;
  if (provider !== undefined) out.metadata.trace_provider = provider;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
}

export const langchain: Adapter = adapterOf(
  FORMAT,
  { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator },
  normalize,
);
export default langchain;
