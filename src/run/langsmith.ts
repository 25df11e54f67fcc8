/**
 * LangSmith's run metadata in the run builder's names (DESIGN "Mapping
 * decisions"): `ls_provider` / `ls_model_name` are what LangChain and the
 * langsmith SDK call `trace_provider` / `trace_model_name`. They are read after
 * what the run says itself: a `trace_*` it was sent with, then the model its
 * messages name (the reply's, else the request's), so the model that answered
 * wins over the one configured. The `ls_*` invocation settings (`ls_temperature`,
 * `ls_max_tokens`, `ls_stop`, ...) are copied into `invocation_params` under
 * their plain names, beside whatever the run already had there; so are the
 * entries of `ls_invocation_params` (the langsmith SDK's client wrappers).
 */
import type { ModelInfo } from "../../adapters/types.js";
import { isObj, type Obj } from "../internal/obj.js";

/** `ls_*` keys that identify the model or the integration rather than set the call. */
const NOT_SETTINGS = new Set([
  "ls_provider",
  "ls_model_name",
  "ls_model_type",
  "ls_integration",
  "ls_run_depth",
  "ls_method",
  "ls_agent_type",
]);

function name(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/**
 * The llm run's metadata with `trace_provider`, `trace_model_name` and
 * `invocation_params` filled from `named` (what the messages say) and the `ls_*`
 * keys; undefined when there is nothing to add. Never overwrites a value the run
 * was sent with (other than a copy of its ls_* twin), so applying it again
 * changes nothing.
 */
export function withModelIdentity(metadata: Obj | undefined, named: ModelInfo = {}): Obj | undefined {
  const m = metadata ?? {};
  const add: Obj = {};
  // A trace_* equal to its ls_* twin says no more than ls_* does (it may be this function's own
  // earlier answer, from before the reply came): the model the messages name still wins over it.
  const own = (sent: unknown, ls: unknown) => (name(sent) !== undefined && sent !== ls ? name(sent) : undefined);
  const provider = own(m.trace_provider, m.ls_provider) ?? named.trace_provider ?? name(m.trace_provider) ?? name(m.ls_provider);
  const model = own(m.trace_model_name, m.ls_model_name) ?? named.trace_model_name ?? name(m.trace_model_name) ?? name(m.ls_model_name);
  if (provider !== undefined && m.trace_provider !== provider) add.trace_provider = provider;
  if (model !== undefined && m.trace_model_name !== model) add.trace_model_name = model;
  const current = isObj(m.invocation_params) ? m.invocation_params : undefined;
  let params: Obj | undefined;
  const copy = (plain: string, v: unknown) => {
    if (current && Object.hasOwn(current, plain)) return;
    (params ??= { ...current })[plain] = v;
  };
  for (const k in m) {
    if (!k.startsWith("ls_") || NOT_SETTINGS.has(k) || m[k] === undefined || m[k] === null) continue;
    // The langsmith SDK's client wrappers send the call's settings as one object: they are the settings, not one named so.
    if (k === "ls_invocation_params" && isObj(m[k])) for (const [plain, v] of Object.entries(m[k])) copy(plain, v);
    else copy(k.slice(3), m[k]);
  }
  if (params) add.invocation_params = params;
  return Object.keys(add).length ? { ...m, ...add } : undefined;
}
