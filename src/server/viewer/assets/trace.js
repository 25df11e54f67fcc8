/* global document, location */
// One trace: the run tree (collapsible) with a waterfall timeline, and the
// selected run's details beside it.
import { api } from "./api.js";
import { h, clear, fmtMs, fmtInt, msBetween } from "./dom.js";
import { renderRun } from "./run.js";
import { feedbackChips, summarize } from "./feedback.js";

/** Children by parent; runs whose parent is not in the trace are roots. */
function buildTree(runs) {
  const ids = new Set(runs.map((r) => r.id));
  const kids = new Map();
  const roots = [];
  for (const r of runs) {
    if (r.parent_run_id && ids.has(r.parent_run_id)) {
      if (!kids.has(r.parent_run_id)) kids.set(r.parent_run_id, []);
      kids.get(r.parent_run_id).push(r);
    } else roots.push(r);
  }
  return { roots, kids };
}

function span(runs) {
  let t0 = Infinity;
  let t1 = -Infinity;
  for (const r of runs) {
    const s = Date.parse(r.start_time);
    const e = Date.parse(r.end_time ?? r.start_time);
    if (Number.isFinite(s)) t0 = Math.min(t0, s);
    if (Number.isFinite(e)) t1 = Math.max(t1, e);
    if (Number.isFinite(s)) t1 = Math.max(t1, s);
  }
  return { t0, total: Math.max(t1 - t0, 1) };
}

/** Selecting another run of the trace on screen only swaps the details (the tree keeps its folds). */
export async function renderTrace(main, traceId, runId, ctx) {
  const detailEl = main.querySelector("#run-detail");
  if (runId && detailEl && main.dataset.traceId === traceId) {
    for (const n of main.querySelectorAll(".tree .node")) n.classList.toggle("selected", n.dataset.runId === runId);
    return renderRun(detailEl, runId, ctx);
  }
  const { runs, feedback, logs } = await api(`/api/viewer/traces/${encodeURIComponent(traceId)}`);
  if (runs.length === 0) return renderLogsOnly(main, traceId, logs ?? []);
  const feedbackByRun = new Map();
  for (const f of feedback ?? []) feedbackByRun.set(f.run_id, [...(feedbackByRun.get(f.run_id) ?? []), f]);
  const { roots, kids } = buildTree(runs);
  const { t0, total } = span(runs);
  const selected = runId ?? roots[0]?.id;
  const collapsed = new Set();
  const tree = h("div", { class: "tree", role: "tree" });
  const detail = h("section", { class: "run-detail", id: "run-detail" });

  const pct = (ms) => `${Math.max(0, Math.min(100, (ms / total) * 100)).toFixed(3)}%`;
  const node = (r, depth) => {
    const children = kids.get(r.id) ?? [];
    const start = Date.parse(r.start_time) - t0;
    const dur = r.latency_ms ?? 0;
    const ttft = r.run_type === "llm" ? msBetween(r.start_time, r.first_token_time) : null;
    const toggle = children.length
      ? h(
          "button",
          {
            class: "toggle",
            type: "button",
            "aria-label": "collapse",
            onclick: (e) => (e.stopPropagation(), collapsed.has(r.id) ? collapsed.delete(r.id) : collapsed.add(r.id), draw()),
          },
          collapsed.has(r.id) ? "▸" : "▾",
        )
      : h("span", { class: "toggle" });
    const bar = h("div", {
      class: `bar ${r.error ? "err" : ""} ${r.run_type ?? ""}`,
      style: { left: pct(Number.isFinite(start) ? start : 0), width: `max(2px, ${pct(dur)})` },
      title: `starts at +${fmtMs(start)}, takes ${fmtMs(r.latency_ms)}`,
    });
    const marks =
      ttft !== null
        ? h("div", { class: "ttft-mark", style: { left: pct(start + ttft) }, title: `first token after ${fmtMs(ttft)}` })
        : null;
    const el = h(
      "div",
      {
        class: `node${r.id === selected ? " selected" : ""}`,
        role: "treeitem",
        dataset: { runId: r.id, depth: String(depth) },
        tabindex: "0",
        onclick: () => (location.hash = `#/trace/${encodeURIComponent(traceId)}/${encodeURIComponent(r.id)}`),
      },
      h(
        "div",
        { class: "label", style: { paddingLeft: `${depth * 14}px` } },
        toggle,
        h("span", { class: `type t-${r.run_type ?? "run"}` }, r.run_type ?? "run"),
        h("span", { class: "run-name" }, r.name ?? "(unnamed)"),
        r.error ? h("span", { class: "badge err", title: r.error }, "error") : null,
        feedbackChips(summarize(feedbackByRun.get(r.id))),
      ),
      h(
        "div",
        { class: "metrics" },
        h("span", { class: "dur" }, fmtMs(r.latency_ms)),
        r.total_tokens !== null ? h("span", { class: "tok" }, `${fmtInt(r.total_tokens)} tok${r.estimated ? " ~" : ""}`) : null,
      ),
      h("div", { class: "lane" }, bar, marks),
    );
    const out = [el];
    if (!collapsed.has(r.id)) for (const c of children) out.push(...node(c, depth + 1));
    return out;
  };
  const draw = () => {
    clear(tree);
    const frag = document.createDocumentFragment();
    for (const r of roots) frag.append(...node(r, 0));
    tree.append(frag);
  };
  draw();
  main.dataset.traceId = traceId;
  clear(main).append(
    h("nav", { class: "crumbs" }, h("a", { href: "#/" }, "Traces"), " / ", roots[0]?.name ?? traceId),
    h("p", { class: "muted" }, `${fmtInt(runs.length)} runs · ${fmtMs(total)} · trace ${traceId}`),
    h(
      "div",
      { class: "trace-layout" },
      h(
        "section",
        { class: "tree-wrap" },
        h("div", { class: "tree-head" }, h("span", {}, "Run"), h("span", {}, "Duration"), h("span", {}, "Timeline")),
        tree,
      ),
      detail,
    ),
  );
  if (selected) await renderRun(detail, selected, ctx);
}

/** A trace whose log records made no run: the records themselves, oldest first, as text. */
function renderLogsOnly(main, traceId, logs) {
  delete main.dataset.traceId;
  const text = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));
  const rows = logs.map((l) =>
    h(
      "li",
      { class: "log-record" },
      h(
        "div",
        { class: "log-head" },
        h("span", { class: "log-event" }, l.event_name ?? "(no event name)"),
        h("span", { class: "muted" }, ` ${l.time}${l.span_id ? ` · span ${l.span_id}` : ""}`),
      ),
      l.body !== null && l.body !== undefined ? h("pre", { class: "log-body" }, text(l.body)) : null,
      l.attributes && Object.keys(l.attributes).length ? h("pre", { class: "log-attributes" }, text(l.attributes)) : null,
    ),
  );
  clear(main).append(
    h("nav", { class: "crumbs" }, h("a", { href: "#/" }, "Traces"), " / ", traceId),
    h("p", { class: "muted" }, `${fmtInt(logs.length)} log records · no runs (no span of this trace made one) · trace ${traceId}`),
    h("ol", { class: "log-records" }, ...rows),
  );
}
