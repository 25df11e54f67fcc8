// Feedback on runs: chips for a list or a tree (key and mean score), and the
// full list (key, score or value, comment, source) for a run's page.
import { h, json, fmtTime } from "./dom.js";

function fmtScore(s) {
  if (s === null || s === undefined) return null;
  return Number.isInteger(s) ? String(s) : s.toFixed(2);
}

/** One chip per key: `correctness 0.75 ×4`. */
export function feedbackChips(summaries) {
  if (!summaries?.length) return null;
  return h(
    "span",
    { class: "fb-chips" },
    summaries.map((f) => {
      const score = fmtScore(f.avg_score);
      const text = `${f.key}${score !== null ? ` ${score}` : ""}${f.count > 1 ? ` ×${f.count}` : ""}`;
      return h(
        "span",
        { class: "fb-chip", title: `feedback ${f.key}: ${f.count} given${score !== null ? `, mean score ${score}` : ""}` },
        text,
      );
    }),
  );
}

/** A run's feedback as a table. */
export function feedbackTable(items) {
  if (!items?.length) return null;
  return h(
    "table",
    { class: "feedback", "aria-label": "Feedback" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Key", "Score", "Value", "Comment", "Source", "Given"].map((c) => h("th", {}, c)),
      ),
    ),
    h(
      "tbody",
      {},
      items.map((f) =>
        h(
          "tr",
          { class: "feedback-row", dataset: { feedbackId: f.id } },
          h("td", { class: "fb-key" }, f.key),
          h("td", { class: "fb-score num" }, fmtScore(f.score) ?? "–"),
          h(
            "td",
            { class: "fb-value" },
            f.value === null || f.value === undefined ? "–" : typeof f.value === "string" ? f.value : json(f.value),
          ),
          h("td", { class: "fb-comment" }, f.comment ?? "–"),
          h("td", { class: "fb-source" }, f.source ?? "api"),
          h("td", { class: "fb-time" }, fmtTime(f.created_at)),
        ),
      ),
    ),
  );
}

/** Feedback summed per key over a set of items (the tree's per-run chips). */
export function summarize(items) {
  const by = new Map();
  for (const f of items ?? []) {
    const s = by.get(f.key) ?? { key: f.key, count: 0, sum: 0, scored: 0 };
    s.count++;
    if (typeof f.score === "number") {
      s.sum += f.score;
      s.scored++;
    }
    by.set(f.key, s);
  }
  return [...by.values()].map((s) => ({ key: s.key, count: s.count, avg_score: s.scored ? s.sum / s.scored : null }));
}
