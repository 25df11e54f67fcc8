// One run: summary, usage and cost, the conversation (llm runs), inputs and
// outputs as JSON otherwise, error with its trace, metadata, tags, raw record.
import { api } from "./api.js";
import { h, clear, fmtMs, fmtInt, fmtCost, fmtTime, msBetween, json, folded } from "./dom.js";
import { conversation } from "./messages.js";
import { feedbackTable } from "./feedback.js";
import { webhookDeliveries } from "./webhooks.js";

function nativeMessages(stored, normalized) {
  if (normalized && Array.isArray(normalized.messages)) return normalized.messages;
  if (stored && Array.isArray(stored.messages)) return stored.messages;
  return null;
}

// An llm run whose instrumentation captured no content keeps its usage on the run itself.
function usageOf(run) {
  const out = nativeMessages(run.outputs, run.normalized_outputs);
  return out?.[0]?.usage_metadata ?? (run.run_type === "llm" ? run.extra?.metadata?.usage_metadata : null) ?? null;
}

function facts(pairs) {
  return h(
    "dl",
    { class: "facts" },
    pairs
      .filter(([, v]) => v !== null && v !== undefined && v !== "")
      .map(([k, v]) => [h("dt", {}, k), h("dd", { dataset: { fact: k } }, v)]),
  );
}

export async function renderRun(el, runId, _ctx) {
  const run = await api(`/api/viewer/runs/${encodeURIComponent(runId)}`);
  const meta = run.extra?.metadata ?? {};
  const u = usageOf(run);
  const est = u?.estimated ? " (estimated)" : "";
  const latency = msBetween(run.start_time, run.end_time);
  const ttft = msBetween(run.start_time, run.first_token_time);
  const inMsgs = run.run_type === "llm" ? nativeMessages(run.inputs, run.normalized_inputs) : null;
  const outMsgs = run.run_type === "llm" ? nativeMessages(run.outputs, run.normalized_outputs) : null;
  const sections = [
    h(
      "h2",
      {},
      run.name ?? "(unnamed)",
      " ",
      h("span", { class: `type t-${run.run_type ?? "run"}` }, run.run_type ?? "run"),
      run.error ? h("span", { class: "badge err" }, "error") : null,
    ),
    facts([
      ["Start", fmtTime(run.start_time)],
      ["Latency", run.end_time ? fmtMs(latency) : "running"],
      ["Time to first token", ttft === null ? null : fmtMs(ttft)],
      ["Model", meta.trace_model_name ?? meta.ls_model_name],
      ["Provider", meta.trace_provider ?? meta.ls_provider],
      ["Input tokens", u ? `${fmtInt(u.input_tokens)}${est}` : null],
      ["Output tokens", u ? `${fmtInt(u.output_tokens)}${est}` : null],
      ["Total tokens", u ? `${fmtInt(u.total_tokens)}${est}` : null],
      ["Cache read", u?.input_token_details?.cache_read !== undefined ? fmtInt(u.input_token_details.cache_read) : null],
      ["Cache write", u?.input_token_details?.cache_creation !== undefined ? fmtInt(u.input_token_details.cache_creation) : null],
      ["Reasoning tokens", u?.output_token_details?.reasoning !== undefined ? fmtInt(u.output_token_details.reasoning) : null],
      ["Cost", u?.total_cost !== undefined ? `${fmtCost(u.total_cost)}${est}` : null],
      ["Project", run.session_name],
      ["Format", run.detected_format],
      ["Run id", run.id],
    ]),
  ];
  if (run.feedback?.length) sections.push(h("h3", {}, "Feedback"), feedbackTable(run.feedback));
  if (run.webhooks?.length) sections.push(h("h3", {}, "Webhook deliveries"), webhookDeliveries(run.webhooks));
  if (run.error) sections.push(h("div", { class: "error-box" }, h("h3", {}, "Error"), folded(run.error, 4000, "pre")));
  if (run.normalize_error) sections.push(h("div", { class: "note" }, `Not shown as messages: ${run.normalize_error}`));
  if (meta.content_captured === false)
    sections.push(h("h3", {}, "Conversation"), h("div", { class: "note" }, "content not captured by the instrumentation"));
  else if (inMsgs || outMsgs) sections.push(h("h3", {}, "Conversation"), conversation(inMsgs ?? [], outMsgs ?? []));
  else {
    sections.push(h("h3", {}, "Inputs"), h("pre", { class: "json io" }, json(run.inputs ?? null)));
    sections.push(h("h3", {}, "Outputs"), h("pre", { class: "json io" }, json(run.outputs ?? null)));
  }
  if (run.tags?.length)
    sections.push(
      h("h3", {}, "Tags"),
      h(
        "div",
        { class: "tags" },
        run.tags.map((t) => h("span", { class: "tag" }, String(t))),
      ),
    );
  if (Object.keys(meta).length) sections.push(h("h3", {}, "Metadata"), h("pre", { class: "json" }, json(meta)));
  if (run.attachments?.length)
    sections.push(
      h("h3", {}, "Attachments"),
      h(
        "ul",
        {},
        run.attachments.map((a) => h("li", {}, `${a.name} · ${a.content_type ?? "?"} · ${fmtInt(a.size)} bytes`)),
      ),
    );
  sections.push(h("details", { class: "raw" }, h("summary", {}, "Raw JSON of the stored run"), h("pre", { class: "json" }, json(run))));
  clear(el).append(...sections);
}
