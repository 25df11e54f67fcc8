/**
 * What a request body becomes (`RequestResult`): its messages, its invocation
 * parameters (DESIGN: temperature, max tokens, stop, tools, ...: everything in
 * the body but what the messages and the model are read from; a field set to
 * undefined is no parameter), the provider and the model when it names one.
 * `normalize`'s record keeps no invocation parameters, so it asks for none
 * (`withParams` false): the result's `invocation_params` is then empty.
 */
import type { Message } from "../../src/format/schema.js";
import type { RequestResult } from "../types.js";
import { listed, type Obj, put } from "./guards.js";

export function requestResult(
  messages: Message[],
  body: Obj,
  taken: readonly string[],
  provider: string | undefined,
  model: unknown,
  withParams = true,
): RequestResult {
  const invocation_params: Obj = {};
  if (withParams) for (const k in body) if (!listed(k, taken) && body[k] !== undefined) put(invocation_params, k, body[k]);
  const result: RequestResult = { messages, invocation_params };
  if (provider !== undefined) result.trace_provider = provider;
  if (typeof model === "string") result.trace_model_name = model;
  return result;
}
