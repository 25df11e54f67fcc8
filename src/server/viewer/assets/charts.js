/* global uPlot, window */
// Time charts with uPlot (loaded by index.html from the package's own file),
// each with its numbers in a table beside it: the canvas is for eyes, the
// table for screen readers, tests and anyone who wants the exact value.
// A click on a point gives its bucket, a drag across the plot a range; both
// call `onRange(fromMs, toMs)`.
import { h } from "./dom.js";

const COLORS = ["#2f6fde", "#c62828", "#7b61d1", "#e0a53b", "#2e7d32", "#00838f"];

/** Bucket start as UTC `YYYY-MM-DD HH:MM`, the same on every machine. */
export function fmtBucket(ms) {
  return new Date(ms).toISOString().slice(0, 16).replace("T", " ");
}

function peakOf(buckets, values) {
  let at = -1;
  for (let i = 0; i < values.length; i++) if (values[i] !== null && values[i] !== undefined && (at < 0 || values[i] > values[at])) at = i;
  return at;
}

/** A sentence of the chart's numbers for its accessible description: each series' peak and when. */
function summary(title, buckets, series, fmt) {
  const parts = series.map((s) => {
    const at = peakOf(buckets, s.values);
    return at < 0 ? `${s.label}: no data` : `${s.label} peaks at ${fmt(s.values[at])} at ${fmtBucket(buckets[at])} UTC`;
  });
  return `${title}. ${parts.join("; ")}.`;
}

function dataTable(id, title, buckets, series, fmt) {
  return h(
    "details",
    { class: "chart-numbers" },
    h("summary", {}, "Numbers"),
    h(
      "table",
      { class: "chart-data", dataset: { chart: id }, "aria-label": `${title}, by time bucket (UTC)` },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", {}, "Bucket (UTC)"),
          series.map((s) => h("th", { class: "num", dataset: { series: s.key } }, s.label)),
        ),
      ),
      h(
        "tbody",
        {},
        buckets.map((t, i) =>
          h(
            "tr",
            { dataset: { t: String(t) } },
            h("td", {}, fmtBucket(t)),
            series.map((s) =>
              h(
                "td",
                { class: "num", dataset: { series: s.key, v: s.values[i] === null ? "" : String(s.values[i]) } },
                s.values[i] === null ? "–" : fmt(s.values[i]),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * A time chart: `series` = [{key, label, values}] aligned with `buckets`
 * (epoch ms); `fmt` formats a value for legend and table, `axisFmt` (default `fmt`) the axis ticks.
 */
export function timeChart({ id, title, buckets, stepMs, series, fmt, axisFmt = fmt, onRange }) {
  const plot = h("div", { class: "plot", "aria-hidden": "true" });
  const desc = summary(title, buckets, series, fmt);
  const fig = h(
    "figure",
    { class: "chart", id: `chart-${id}`, role: "group", "aria-label": title, "aria-description": desc, dataset: { chart: id } },
    h("h3", {}, title),
    plot,
    h("p", { class: "sr-only chart-summary" }, desc),
    dataTable(id, title, buckets, series, fmt),
  );
  const draw = () => {
    const width = Math.max(280, Math.floor(plot.clientWidth || 520));
    let downX = null;
    const u = new uPlot(
      {
        width,
        height: 190,
        ms: 1,
        // Counts, times and money start at zero: a flat line reads as flat, not as noise blown up.
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        series: [
          { value: (_u, v) => (v === null ? "–" : fmtBucket(v)) },
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLORS[i % COLORS.length],
            width: 1.5,
            value: (_u, v) => (v === null || v === undefined ? "–" : fmt(v)),
          })),
        ],
        axes: [{}, { values: (_u, vals) => vals.map((v) => axisFmt(v)), size: 64 }],
        cursor: { drag: { x: true, y: false, setScale: false } },
        hooks: {
          setSelect: [
            (u) => {
              if (u.select.width < 3) return;
              const a = u.posToVal(u.select.left, "x");
              const b = u.posToVal(u.select.left + u.select.width, "x");
              onRange?.(Math.floor(a / stepMs) * stepMs, Math.ceil(b / stepMs) * stepMs);
            },
          ],
        },
      },
      [buckets, ...series.map((s) => s.values)],
      plot,
    );
    u.over.addEventListener("mousedown", (e) => (downX = e.clientX));
    u.over.addEventListener("click", (e) => {
      if (downX !== null && Math.abs(e.clientX - downX) > 3) return; // a drag: setSelect handled it
      const i = u.cursor.idx;
      if (i !== null && i !== undefined) onRange?.(buckets[i], buckets[i] + stepMs);
    });
  };
  // Drawn once the figure is in the page (it needs a width).
  window.requestAnimationFrame(draw);
  return fig;
}

/** A sparkline: a tiny chart of one series, labelled with its numbers. */
export function sparkline(values, label) {
  const el = h("span", { class: "spark", role: "img", "aria-label": `${label}: ${values.join(", ")}` });
  window.requestAnimationFrame(() => {
    new uPlot(
      {
        width: 120,
        height: 28,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: false } },
        axes: [{ show: false }, { show: false }],
        series: [{}, { stroke: COLORS[0], width: 1, fill: "rgba(47,111,222,0.12)" }],
      },
      [values.map((_, i) => i), values],
      el,
    );
  });
  return el;
}
