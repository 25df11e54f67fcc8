/**
 * Run records in and out of webhooks.
 *
 * Out (SPEC §6): the completed root run as a Run record, with its input,
 * configuration and metadata under `kwargs`.
 *
 * In: an agent server's run-completion webhook (`run_id`, `thread_id`,
 * `assistant_id`, `status`, `created_at`, `updated_at`, `kwargs: {input,
 * config, metadata}`, and the output as `values` or `output`) becomes a trace
 * run, so agent-server runs show up beside traced calls.
 */
import { ValidationError, type Issue } from "../errors.js";
import { stableUuid, isUuid } from "../run/ids.js";
import { buildRun } from "../run/llm.js";
import { dateTimeProblem, type Run } from "../run/schema.js";
import { isObj, type Obj } from "../internal/obj.js";

export { webhookUrlOf } from "../run/webhook.js";

export function webhookPayload(run: Run): Obj {
  const extra = isObj(run.extra) ? run.extra : {};
  const metadata: Obj = isObj(extra.metadata) ? { ...extra.metadata } : {};
  delete metadata.webhook; // where to send it is not part of what is sent
  return {
    run_id: run.id,
    thread_id: typeof metadata.thread_id === "string" ? metadata.thread_id : null,
    assistant_id: typeof metadata.assistant_id === "string" ? metadata.assistant_id : null,
    name: run.name,
    run_type: run.run_type,
    status: run.error ? "error" : "success",
    created_at: run.start_time,
    updated_at: run.end_time ?? run.start_time,
    error: run.error ?? null,
    output: run.outputs ?? null,
    kwargs: { input: run.inputs ?? {}, config: isObj(extra.config) ? extra.config : isObj(extra.runtime) ? extra.runtime : {}, metadata },
  };
}

const ERROR_STATUSES = new Set(["error", "timeout", "interrupted"]);

function time(v: unknown, loc: string, issues: Issue[]): number | undefined {
  if (v === undefined || v === null) return undefined;
  // The Run schema's rule (RFC 3339 with calendar validation, or epoch ms): Date.parse alone takes "hello 5".
  const problem = typeof v === "string" ? dateTimeProblem(v) : undefined;
  const ms =
    problem === undefined && typeof v === "string"
      ? Date.parse(/([zZ]|[+-]\d{2}:?\d{2})$/.test(v) ? v : `${v}Z`)
      : typeof v === "number" && v >= 0
        ? v
        : NaN;
  if (!Number.isFinite(ms)) {
    issues.push({ loc: ["body", loc], msg: problem ?? "expected an RFC 3339 date-time or epoch milliseconds", type: "datetime_parsing" });
    return undefined;
  }
  return ms;
}

export function agentRunToTraceRun(body: unknown, project: string | undefined): Run {
  if (!isObj(body)) throw new ValidationError([{ loc: ["body"], msg: "expected a JSON object (a run record)", type: "object_type" }]);
  const issues: Issue[] = [];
  const runId = body.run_id;
  if (typeof runId !== "string" || !runId) issues.push({ loc: ["body", "run_id"], msg: "expected a non-empty string", type: "missing" });
  if (body.kwargs !== undefined && !isObj(body.kwargs))
    issues.push({ loc: ["body", "kwargs"], msg: "expected an object", type: "object_type" });
  const created = time(body.created_at, "created_at", issues);
  const updated = time(body.updated_at, "updated_at", issues);
  if (issues.length) throw new ValidationError(issues);
  const kwargs = (body.kwargs ?? {}) as Obj;
  const id = isUuid(runId) ? runId.toLowerCase() : stableUuid(["agent-server-run", runId as string], created);
  const startUs = Math.round((created ?? updated ?? Date.now()) * 1000);
  const endUs = Math.max(Math.round((updated ?? created ?? Date.now()) * 1000), startUs);
  const status = typeof body.status === "string" ? body.status : "success";
  const metadata: Obj = { ...(isObj(kwargs.metadata) ? kwargs.metadata : {}), source: "agent-server-webhook", status };
  for (const k of ["thread_id", "assistant_id"] as const) if (typeof body[k] === "string") metadata[k] = body[k];
  const input = kwargs.input;
  const output = body.values !== undefined ? body.values : body.output;
  return buildRun({
    at: { id },
    name: typeof body.assistant_id === "string" ? `agent ${body.assistant_id}` : "agent-server run",
    run_type: "chain",
    startUs,
    endUs,
    inputs: isObj(input) ? input : input === undefined ? {} : { input },
    outputs: output !== undefined && output !== null ? (isObj(output) ? output : { output }) : undefined,
    error: ERROR_STATUSES.has(status) ? (typeof body.error === "string" ? body.error : status) : undefined,
    tags: ["agent-server"],
    metadata,
    extra: isObj(kwargs.config) ? { config: kwargs.config } : undefined,
    project,
  });
}
