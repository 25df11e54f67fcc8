// A run's outbound webhook deliveries (the store's outbox): where each went,
// its status, and every attempt with its time, answer or error, and duration.
import { h, fmtMs, fmtTime } from "./dom.js";

function attemptOutcome(a) {
  if (a.status_code !== undefined && a.status_code !== null)
    return a.error ? `HTTP ${a.status_code} · ${a.error}` : `HTTP ${a.status_code}`;
  return a.error ?? "";
}

/** One block per delivery: URL and status, then its attempts as a table. */
export function webhookDeliveries(deliveries) {
  if (!deliveries?.length) return null;
  return h(
    "div",
    { class: "webhooks" },
    deliveries.map((d) =>
      h(
        "div",
        { class: "webhook", dataset: { status: d.status } },
        h(
          "p",
          {},
          h("span", { class: `badge ${d.status === "delivered" ? "ok" : d.status === "failed" ? "err" : "pending"}` }, d.status),
          " ",
          h("code", {}, d.url),
          d.status === "pending" && d.next_attempt_at ? ` · next attempt ${fmtTime(d.next_attempt_at)}` : "",
        ),
        d.attempts.length
          ? h(
              "table",
              { class: "webhook-attempts", "aria-label": "Webhook attempts" },
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  ["#", "Time", "Outcome", "Duration"].map((c) => h("th", {}, c)),
                ),
              ),
              h(
                "tbody",
                {},
                d.attempts.map((a, i) =>
                  h(
                    "tr",
                    {},
                    h("td", {}, String(i + 1)),
                    h("td", {}, fmtTime(a.at)),
                    h("td", {}, attemptOutcome(a)),
                    h("td", {}, fmtMs(a.duration_ms)),
                  ),
                ),
              ),
            )
          : h("div", { class: "note" }, "no attempt yet"),
      ),
    ),
  );
}
