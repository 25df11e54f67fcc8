/**
 * What the store derives from a run on ingest (issue "Serve", SPEC §2.6):
 * - for `llm` runs, native messages beside the raw payload and the detected
 *   format; a run that cannot be normalized is still stored, with the reason;
 * - `first_token_time` from the first `new_token` event;
 * - the vendor payloads the `langsmith` SDK's client wrappers log read as the
 *   vendor's (langsmith-wrappers.ts);
 * - the cost of a converted reply (a vendor payload, as the `langsmith` SDK
 *   sends) when its usage has none and its model has a price, as the run
 *   builder adds it to tracepipe's own runs. A run sent in native form is
 *   stored as sent, cost or not;
 * - an llm run's `trace_provider` / `trace_model_name` (and `invocation_params`
 *   from LangSmith's `ls_*` settings) when it was sent without them, as the
 *   run builder names them (run/langsmith.ts): the trace list and filters read
 *   them from the run's metadata like every other run's.
 */
import { normalize } from "../normalize.js";
import { validate } from "../format/validate.js";
import { ValidationError } from "../errors.js";
import { addCost } from "../run/llm.js";
import { withModelIdentity } from "../run/langsmith.js";
import { unwrapLangSmith } from "./langsmith-wrappers.js";

import { isObj, type Obj } from "../internal/obj.js";

export interface Derived {
  detected_format: string | null;
  normalized_inputs: { messages: unknown[] } | null;
  normalized_outputs: { messages: unknown[] } | null;
  normalize_error: string | null;
  first_token_time: string | null;
}

/** Native `{messages}` that validate as they are need no conversion. */
function nativeMessages(v: unknown): unknown[] | undefined {
  if (!isObj(v) || !Array.isArray(v.messages)) return undefined;
  return validate(v.messages).length === 0 ? v.messages : undefined;
}

/** The payloads a producer may log as outputs: the response body, or a wrapper around it. */
function responsePayload(outputs: Obj): unknown {
  return Object.keys(outputs).length === 1 && "output" in outputs ? outputs.output : outputs;
}

/** What deriveLlm finds: the derived columns, and the run's metadata with its model identity filled in when that adds anything. */
export type DerivedLlm = Pick<Derived, "detected_format" | "normalized_inputs" | "normalized_outputs" | "normalize_error"> & {
  metadata?: Obj;
};

export function deriveLlm(inputs: unknown, outputs: unknown, metadata?: Obj): DerivedLlm {
  const none = { detected_format: null, normalized_inputs: null, normalized_outputs: null, normalize_error: null };
  const identified = (d: DerivedLlm, named?: { trace_provider?: string; trace_model_name?: string }): DerivedLlm => {
    const m = withModelIdentity(metadata, named);
    if (m) d.metadata = m;
    return d;
  };
  const hasIn = isObj(inputs) && Object.keys(inputs).length > 0;
  const hasOut = isObj(outputs) && Object.keys(outputs).length > 0;
  if (!hasIn && !hasOut) return identified(none);
  const nIn = hasIn ? nativeMessages(inputs) : undefined;
  const nOut = hasOut ? nativeMessages(outputs) : undefined;
  if ((nIn || !hasIn) && (nOut || !hasOut)) {
    // Already native: stored once, as sent; nothing to derive.
    return identified({ detected_format: "native", normalized_inputs: null, normalized_outputs: null, normalize_error: null });
  }
  try {
    const sent = unwrapLangSmith(hasIn ? inputs : undefined, hasOut && !nOut ? responsePayload(outputs as Obj) : undefined, metadata);
    const rec = normalize({
      request: sent.request,
      response: hasOut ? (nOut ? responsePayload(outputs as Obj) : sent.response) : undefined,
    });
    const reply = rec.outputs?.messages[0];
    if (reply && !reply.usage_metadata && sent.usage) reply.usage_metadata = sent.usage;
    const d = identified(
      {
        detected_format: rec.format,
        // A side that was native already is not copied: only converted messages are stored beside the raw payload.
        normalized_inputs: nIn ? null : (rec.inputs ?? null),
        normalized_outputs: nOut ? null : (rec.outputs ?? null),
        normalize_error: null,
      },
      rec.metadata,
    );
    const model = (d.metadata ?? metadata)?.trace_model_name;
    if (!nOut) addCost(rec.outputs?.messages[0]?.usage_metadata, typeof model === "string" ? model : rec.metadata.trace_model_name);
    return d;
  } catch (err) {
    const msg = err instanceof ValidationError ? err.message : `normalizer failed: ${String(err)}`;
    return identified({ ...none, normalize_error: msg });
  }
}

export function firstTokenTime(events: unknown): string | null {
  if (!Array.isArray(events)) return null;
  for (const e of events) if (isObj(e) && e.name === "new_token" && typeof e.time === "string") return e.time;
  return null;
}
