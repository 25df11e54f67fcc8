/* global location, URLSearchParams, FormData */
// The monitoring page: one project over a time range, in buckets. Every number
// comes from the store's aggregate queries (/api/viewer/monitor); charts link
// to the trace list for the window clicked or dragged, table rows to the list
// filtered by their model, provider or name.
import { api } from "./api.js";
import { h, clear, fmtMs, fmtInt, fmtCost, fmtCostAxis, toLocal } from "./dom.js";
import { timeChart, sparkline } from "./charts.js";

const FIELDS = ["project", "range", "from", "to", "bucket"];

function paramsFromHash() {
  const i = location.hash.indexOf("?");
  const p = new URLSearchParams(i >= 0 ? location.hash.slice(i + 1) : "");
  const f = {};
  for (const k of FIELDS) if (p.get(k)) f[k] = p.get(k);
  return f;
}

/** The trace list for one project and window, plus any filter. */
export function listLink(project, fromMs, toMs, extra = {}) {
  const p = new URLSearchParams({
    project,
    start_time_gte: new Date(fromMs).toISOString(),
    start_time_lt: new Date(toMs).toISOString(),
    ...extra,
  });
  return `#/?${p}`;
}

const STEP_NAMES = { 60000: "a minute", 3600000: "an hour", 86400000: "a day" };
const pct = (v) => `${(v * 100).toFixed(1)}%`;
const fmtTok = (v) => fmtInt(Math.round(v));
const fmtUsd = (v) => fmtCost(v);

function breakdownTable(by, title, rows, project, q) {
  const filter = by === "name" ? "name" : by;
  return h(
    "section",
    { class: "breakdown", dataset: { by } },
    h("h3", {}, title),
    rows.length === 0
      ? h("p", { class: "muted" }, "No runs in this range.")
      : h(
          "table",
          { class: "traces breakdown-table", "aria-label": title },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              [
                by === "name" ? "Run name" : by === "model" ? "Model" : "Provider",
                "Runs",
                "Errors",
                "p50",
                "p95",
                "Input tokens",
                "Output tokens",
                "Cost",
                "Runs over time",
              ].map((c, i) => h("th", { class: i > 0 && i < 8 ? "num" : "" }, c)),
            ),
          ),
          h(
            "tbody",
            {},
            rows.map((r) =>
              h(
                "tr",
                { class: "breakdown-row", dataset: { value: r.value } },
                h("td", { class: "value" }, h("a", { href: listLink(project, q.from_ms, q.to_ms, { [filter]: r.value }) }, r.value)),
                h("td", { class: "runs num" }, fmtInt(r.runs)),
                h("td", { class: "errors num" }, fmtInt(r.errors)),
                h("td", { class: "p50 num" }, fmtMs(r.latency_p50)),
                h("td", { class: "p95 num" }, fmtMs(r.latency_p95)),
                h(
                  "td",
                  { class: "input-tokens num", dataset: { v: r.input_tokens ?? "" } },
                  r.input_tokens === null ? "–" : fmtInt(r.input_tokens),
                ),
                h(
                  "td",
                  { class: "output-tokens num", dataset: { v: r.output_tokens ?? "" } },
                  r.output_tokens === null ? "–" : fmtInt(r.output_tokens),
                ),
                h("td", { class: "cost num", dataset: { v: r.cost ?? "" } }, fmtCost(r.cost)),
                h("td", { class: "spark-cell" }, sparkline(r.spark, `${r.value}, runs per bucket`)),
              ),
            ),
          ),
        ),
  );
}

export async function renderMonitor(main) {
  const f = paramsFromHash();
  const { projects } = await api("/api/viewer/projects");
  const project = f.project ?? projects[0]?.name;
  const range = f.range ?? (f.from && f.to ? "custom" : "day");
  const opt = (v, label, cur) => h("option", { value: v, selected: cur === v }, label);
  const form = h(
    "form",
    { class: "filters", id: "monitor-form" },
    h(
      "label",
      {},
      "Project",
      h(
        "select",
        { name: "project" },
        projects.map((p) => opt(p.name, p.name, project)),
      ),
    ),
    h(
      "label",
      {},
      "Range",
      h(
        "select",
        { name: "range" },
        opt("hour", "last hour", range),
        opt("day", "last day", range),
        opt("week", "last week", range),
        opt("custom", "custom", range),
      ),
    ),
    h("label", {}, "From", h("input", { name: "from", type: "datetime-local", value: toLocal(f.from) })),
    h("label", {}, "To", h("input", { name: "to", type: "datetime-local", value: toLocal(f.to) })),
    h(
      "label",
      {},
      "Bucket",
      h(
        "select",
        { name: "bucket" },
        ["auto", "minute", "hour", "day"].map((b) => opt(b, b, f.bucket ?? "auto")),
      ),
    ),
    h("button", { type: "submit" }, "Apply"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const d = new FormData(form);
    const p = new URLSearchParams();
    for (const k of ["project", "range", "bucket"]) if (d.get(k)) p.set(k, d.get(k));
    if (d.get("range") === "custom") {
      for (const k of ["from", "to"]) {
        const t = new Date(d.get(k));
        if (!Number.isNaN(t.getTime())) p.set(k, t.toISOString());
      }
    }
    location.hash = `#/monitor?${p}`;
  });
  delete main.dataset.traceId;
  if (!project) {
    clear(main).append(h("h1", {}, "Monitoring"), h("p", { class: "muted" }, "No projects yet. Send some runs and they are charted here."));
    return;
  }
  const params = {
    project,
    range: range === "custom" ? undefined : range,
    from: range === "custom" ? f.from : undefined,
    to: range === "custom" ? f.to : undefined,
    bucket: f.bucket,
  };
  const [m, byModel, byProvider, byName] = await Promise.all([
    api("/api/viewer/monitor", params),
    api("/api/viewer/monitor/breakdown", { ...params, by: "model" }),
    api("/api/viewer/monitor/breakdown", { ...params, by: "provider" }),
    api("/api/viewer/monitor/breakdown", { ...params, by: "name" }),
  ]);
  const open = (a, b) => (location.hash = listLink(project, a, b));
  const t = m.traces;
  const l = m.llm;
  const rate = t.runs.map((n, i) => (n ? t.errors[i] / n : null));
  /** Percentile series of one measure (`latency`, `ttft`) read from `from`. */
  const pcts = (from, measure, ps) => ps.map((p) => [p, p, from[`${measure}_${p}`]]);
  // Each chart: id, title, its series as [key, label, values], the value format and, where it differs, the axis's.
  const specs = [
    [
      "traces",
      "Traces and errors",
      [
        ["runs", "traces", t.runs],
        ["errors", "errors", t.errors],
      ],
      fmtInt,
    ],
    ["error-rate", "Error rate (traces)", [["rate", "error rate", rate]], pct],
    ["trace-latency", "Trace latency", pcts(t, "latency", ["p50", "p95", "p99"]), fmtMs],
    ["llm-latency", "LLM call latency", pcts(l, "latency", ["p50", "p95", "p99"]), fmtMs],
    ["ttft", "Time to first token (streamed calls)", pcts(l, "ttft", ["p50", "p95"]), fmtMs],
    [
      "llm-runs",
      "LLM calls and errors",
      [
        ["runs", "calls", l.runs],
        ["errors", "errors", l.errors],
      ],
      fmtInt,
    ],
    [
      "tokens",
      "Tokens",
      [
        ["input", "input", l.input_tokens],
        ["output", "output", l.output_tokens],
      ],
      fmtTok,
    ],
    ["cost", "Cost (USD)", [["cost", "cost", l.cost]], fmtUsd, fmtCostAxis],
  ];
  const charts = h(
    "div",
    { class: "charts" },
    ...specs.map(([id, title, series, fmt, axisFmt]) =>
      timeChart({
        id,
        title,
        buckets: m.buckets,
        stepMs: m.step_ms,
        series: series.map(([key, label, values]) => ({ key, label, values })),
        fmt,
        axisFmt,
        onRange: open,
      }),
    ),
  );
  const q = { from_ms: m.from_ms, to_ms: m.to_ms };
  clear(main).append(
    h("h1", {}, "Monitoring"),
    form,
    h(
      "p",
      { class: "muted", id: "monitor-range" },
      `${project} · ${new Date(m.from_ms).toISOString()} to ${new Date(m.to_ms).toISOString()} · buckets of ${STEP_NAMES[m.step_ms] ?? fmtMs(m.step_ms)} · click a point or drag across a chart to see its traces`,
    ),
    charts,
    breakdownTable("model", "By model (LLM calls)", byModel.rows, project, q),
    breakdownTable("provider", "By provider (LLM calls)", byProvider.rows, project, q),
    breakdownTable("name", "By run name (traces)", byName.rows, project, q),
  );
}
