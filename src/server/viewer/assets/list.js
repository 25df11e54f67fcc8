/* global document, location, URLSearchParams, FormData */
// The trace list: filters, a cursor-paged table, and live updates by polling
// (fetch, not EventSource, because EventSource cannot send the X-Api-Key header).
import { api } from "./api.js";
import { h, clear, fmtMs, fmtInt, fmtCost, fmtTime, toLocal } from "./dom.js";
import { feedbackChips } from "./feedback.js";

const FIELDS = [
  "project",
  "name",
  "run_type",
  "model",
  "provider",
  "q",
  "start_time_gte",
  "start_time_lt",
  "min_cost",
  "max_cost",
  "feedback_key",
  "sort",
  "order",
];
/** Repeatable filters: `metadata=key=value` and `tag=name`, each as many times as given. */
const LISTS = ["metadata", "tag"];
const POLL_MS = 2000;

/** Filters live in the hash (#/?name=x) so a filtered list survives a reload; never the API key. */
function filtersFromHash() {
  const i = location.hash.indexOf("?");
  const p = new URLSearchParams(i >= 0 ? location.hash.slice(i + 1) : "");
  const f = {};
  for (const k of [...FIELDS, "errors_only"]) if (p.get(k)) f[k] = p.get(k);
  for (const k of LISTS) {
    const all = p.getAll(k).filter(Boolean);
    if (all.length) f[k] = all;
  }
  return f;
}

function toIso(local) {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function tokensCell(t) {
  if (t.total_tokens === null) return "–";
  return h(
    "span",
    { title: `input ${fmtInt(t.input_tokens)} / output ${fmtInt(t.output_tokens)}${t.estimated ? " (estimated)" : ""}` },
    fmtInt(t.total_tokens),
    t.estimated ? h("span", { class: "est", title: "counted locally, not reported by the vendor" }, " ~") : null,
  );
}

function row(t) {
  const open = () => (location.hash = `#/trace/${encodeURIComponent(t.trace_id)}`);
  const status = t.error
    ? h("span", { class: "badge err", title: t.error }, `error${t.error_count > 1 ? ` ×${t.error_count}` : ""}`)
    : t.end_time
      ? h("span", { class: "badge ok" }, "ok")
      : h("span", { class: "badge pending" }, "running");
  return h(
    "tr",
    { class: "trace-row", dataset: { traceId: t.trace_id }, tabindex: "0", onclick: open, onkeydown: (e) => e.key === "Enter" && open() },
    h(
      "td",
      { class: "name" },
      h("a", { href: `#/trace/${encodeURIComponent(t.trace_id)}` }, t.name ?? "(unnamed)"),
      h("span", { class: "type" }, t.run_type ?? ""),
    ),
    h("td", { class: "start" }, fmtTime(t.start_time)),
    h("td", { class: "latency num" }, fmtMs(t.latency_ms)),
    h("td", { class: "status" }, status),
    h("td", { class: "model" }, t.models.join(", ") || "–"),
    h("td", { class: "provider" }, t.providers.join(", ") || "–"),
    h("td", { class: "tokens num" }, tokensCell(t)),
    h("td", { class: "cost num" }, fmtCost(t.total_cost)),
    h("td", { class: "ttft num" }, fmtMs(t.ttft_ms)),
    h("td", { class: "runs num" }, fmtInt(t.run_count)),
    h("td", { class: "feedback" }, feedbackChips(t.feedback) ?? "–"),
  );
}

export async function renderList(main, ctx) {
  const f = filtersFromHash();
  const projects = await api("/api/viewer/projects");
  const input = (name, label, attrs = {}) => h("label", {}, label, h("input", { name, value: f[name] ?? "", ...attrs }));
  const form = h(
    "form",
    { class: "filters", id: "filters" },
    h(
      "label",
      {},
      "Project",
      h(
        "select",
        { name: "project" },
        h("option", { value: "" }, "all"),
        projects.projects.map((p) => h("option", { value: p.name, selected: f.project === p.name }, p.name)),
      ),
    ),
    input("name", "Name"),
    input("run_type", "Run type", { placeholder: "chain, llm…" }),
    input("model", "Model"),
    input("provider", "Provider"),
    input("q", "Search inputs/outputs", { type: "search" }),
    h("label", {}, "From", h("input", { name: "start_time_gte", type: "datetime-local", value: toLocal(f.start_time_gte) })),
    h("label", {}, "To", h("input", { name: "start_time_lt", type: "datetime-local", value: toLocal(f.start_time_lt) })),
    input("min_cost", "Min cost $", { type: "number", min: "0", step: "any" }),
    input("max_cost", "Max cost $", { type: "number", min: "0", step: "any" }),
    // One field per metadata / tag filter given, and one empty for the next.
    [...(f.metadata ?? []), ""].map((v, i) =>
      h(
        "label",
        {},
        i === 0 ? "Metadata key=value" : "and",
        h("input", { name: "metadata", value: v, placeholder: "user_id=42", class: "metadata-filter" }),
      ),
    ),
    [...(f.tag ?? []), ""].map((v, i) =>
      h("label", {}, i === 0 ? "Has tag" : "and tag", h("input", { name: "tag", value: v, class: "tag-filter" })),
    ),
    input("feedback_key", "Has feedback"),
    h("label", { class: "check" }, h("input", { name: "errors_only", type: "checkbox", checked: f.errors_only === "true" }), "errors only"),
    h(
      "label",
      {},
      "Sort",
      h(
        "select",
        { name: "sort" },
        h("option", { value: "start_time", selected: f.sort !== "latency" && f.sort !== "cost" }, "start time"),
        h("option", { value: "latency", selected: f.sort === "latency" }, "latency"),
        h("option", { value: "cost", selected: f.sort === "cost" }, "cost"),
      ),
    ),
    h(
      "label",
      {},
      "Order",
      h(
        "select",
        { name: "order" },
        h("option", { value: "desc", selected: f.order !== "asc" }, "descending"),
        h("option", { value: "asc", selected: f.order === "asc" }, "ascending"),
      ),
    ),
    h("button", { type: "submit" }, "Apply"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const p = new URLSearchParams();
    for (const k of FIELDS) {
      let v = data.get(k);
      if (k === "start_time_gte" || k === "start_time_lt") v = toIso(v);
      if (v) p.set(k, v);
    }
    for (const k of LISTS) for (const v of data.getAll(k)) if (String(v).trim()) p.append(k, String(v).trim());
    if (data.get("errors_only")) p.set("errors_only", "true");
    location.hash = `#/?${p}`;
  });
  const tbody = h("tbody");
  const more = h("button", { type: "button", hidden: true }, "Load more");
  const empty = h("p", { class: "muted", hidden: true }, "No traces match. Send some with wrapOpenAI / traceable and they appear here.");
  const table = h(
    "table",
    { class: "traces" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Name", "Start", "Latency", "Status", "Model", "Provider", "Tokens", "Cost", "TTFT", "Runs", "Feedback"].map((c) =>
          h("th", {}, c),
        ),
      ),
    ),
    tbody,
  );
  delete main.dataset.traceId;
  clear(main).append(h("h1", {}, "Traces"), form, table, empty, more);

  const shown = new Map(); // trace_id -> row element
  let cursor = null;
  const put = (traces, atTop) => {
    const frag = document.createDocumentFragment();
    for (const t of traces) {
      const el = row(t);
      const old = shown.get(t.trace_id);
      if (old) old.replaceWith(el);
      else frag.append(el);
      shown.set(t.trace_id, el);
    }
    if (atTop) tbody.prepend(frag);
    else tbody.append(frag);
    empty.hidden = shown.size > 0;
  };
  const load = async () => {
    const page = await api("/api/viewer/traces", { ...f, cursor });
    put(page.traces, false);
    cursor = page.cursor;
    more.hidden = !cursor;
  };
  more.addEventListener("click", () => void load().catch(ctx.fail));
  await load();

  // Live: the first page again every POLL_MS; rows that changed are replaced in place,
  // new traces go on top when the list is newest-first (elsewhere they would be out of order).
  const newestFirst = (f.sort ?? "start_time") === "start_time" && (f.order ?? "desc") === "desc";
  ctx.poll(async () => {
    const page = await api("/api/viewer/traces", f);
    const fresh = page.traces.filter((t) => !shown.has(t.trace_id));
    put(
      page.traces.filter((t) => shown.has(t.trace_id)),
      false,
    );
    if (newestFirst && fresh.length) put(fresh, true);
  }, POLL_MS);
}
