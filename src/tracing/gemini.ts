/**
 * wrapGemini(client): the same `@google/genai` client object, with
 * `client.models.generateContent` and `client.models.generateContentStream`
 * traced as `llm` runs through the gemini adapter. Chat sessions
 * (`client.chats.create(...).sendMessage`) call the same `models` methods, so
 * they are traced too, once per call. This module never imports the SDK: it
 * only touches the object it is given.
 *
 * What is recorded is the call's parameters (`model`, `contents`, `config`)
 * without the SDK's client-side `httpOptions` (headers may carry keys) and
 * `abortSignal`, and the reply without `sdkHttpResponse` (the HTTP headers the
 * SDK attaches to every response and chunk).
 */
import { gemini } from "../../adapters/index.js";
import { isObj } from "../internal/obj.js";
import { getDefaultClient } from "../ingest/default.js";
import { tracingEnabled, tracingOn } from "./context.js";
import { WRAPPED } from "../internal/wrapped.js";
import { LlmCall, type WrapOptions } from "./llm.js";
import { observeReply, observeStream, type View } from "./observe.js";
import type { Obj } from "../internal/obj.js";
import { quietly } from "../internal/quietly.js";

type Method = (params: unknown, ...rest: unknown[]) => unknown;
type Models = Record<string, unknown> & Record<symbol, unknown>;
const CLIENT_ONLY = ["httpOptions", "abortSignal"];

/** The parameters as a run holds them. */
function recorded(params: Obj): Obj {
  const config = params.config;
  if (!isObj(config) || !CLIENT_ONLY.some((k) => k in config)) return params;
  const kept: Obj = {};
  for (const k in config) if (!CLIENT_ONLY.includes(k)) kept[k] = config[k];
  return { ...params, config: kept };
}

/** A reply or chunk without the SDK's transport details. */
const withoutTransport: View = (v) => {
  if (!isObj(v) || !("sdkHttpResponse" in v)) return v;
  const { sdkHttpResponse: _headers, ...rest } = v;
  return rest;
};

function patch(models: Models, method: string, observe: typeof observeReply, opts: WrapOptions): void {
  const original = models[method];
  if (typeof original !== "function") return;
  const traced: Method = function (this: unknown, params, ...rest) {
    const self = this ?? models;
    if (!tracingOn() || !isObj(params)) return (original as Method).call(self, params, ...rest);
    let call: LlmCall;
    try {
      call = new LlmCall(gemini, "google", recorded(params), opts.client ?? getDefaultClient(), opts, "ChatGoogleGenerativeAI");
    } catch {
      // Tracing never throws into the host: the call runs untraced.
      return (original as Method).call(self, params, ...rest);
    }
    let result: unknown;
    try {
      result = (original as Method).call(self, params, ...rest);
    } catch (err) {
      quietly(() => call.fail(err));
      throw err;
    }
    return observe(call, result, withoutTransport);
  };
  Object.defineProperty(models, method, { value: traced, writable: true, configurable: true, enumerable: false });
}

export function wrapGemini<T extends object>(client: T, opts: WrapOptions = {}): T {
  if (!tracingEnabled()) return client; // TRACEPIPE_TRACING=false: the client as it is, nothing added
  const models = (client as { models?: Models }).models;
  if (!models || typeof models.generateContent !== "function")
    throw new TypeError("wrapGemini expects a GoogleGenAI client (client.models.generateContent)");
  if (models[WRAPPED]) return client; // wrapping twice would trace every call twice
  patch(models, "generateContent", observeReply, opts);
  patch(models, "generateContentStream", observeStream, opts);
  Object.defineProperty(models, WRAPPED, { value: true });
  return client;
}
