/* global location, URLSearchParams */
// Conversations: runs whose metadata carries session_id, thread_id or
// conversation_id, grouped into threads. The list shows each thread's first
// and last message and totals; a thread's page shows it turn by turn, each
// turn linked to its trace. Messages arrive as text and are placed as text.
import { api } from "./api.js";
import { h, clear, fmtMs, fmtInt, fmtCost, fmtTime, folded } from "./dom.js";

function projectFromHash() {
  const i = location.hash.indexOf("?");
  return new URLSearchParams(i >= 0 ? location.hash.slice(i + 1) : "").get("project") || undefined;
}

const threadHref = (id, project) => `#/thread/${encodeURIComponent(id)}${project ? `?${new URLSearchParams({ project })}` : ""}`;

export async function renderThreads(main) {
  const project = projectFromHash();
  const [{ projects }, page] = await Promise.all([api("/api/viewer/projects"), api("/api/viewer/threads", { project })]);
  const select = h(
    "select",
    { name: "project", "aria-label": "Project" },
    h("option", { value: "" }, "all projects"),
    projects.map((p) => h("option", { value: p.name, selected: p.name === project }, p.name)),
  );
  select.addEventListener(
    "change",
    () => (location.hash = select.value ? `#/threads?${new URLSearchParams({ project: select.value })}` : "#/threads"),
  );
  const tbody = h("tbody");
  const more = h("button", { type: "button", hidden: !page.next_cursor }, "Load more");
  const put = (threads) => {
    for (const t of threads) {
      tbody.append(
        h(
          "tr",
          { class: "thread-row", dataset: { threadId: t.thread_id } },
          h("td", { class: "thread-id" }, h("a", { href: threadHref(t.thread_id, t.project ?? project) }, t.thread_id)),
          h("td", { class: "first-message" }, t.first_message ?? "–"),
          h("td", { class: "last-message" }, t.last_message ?? "–"),
          h("td", { class: "turns num" }, fmtInt(t.turns)),
          h("td", { class: "tokens num" }, fmtInt(t.total_tokens)),
          h("td", { class: "cost num" }, fmtCost(t.cost)),
          h("td", { class: "latency num" }, fmtMs(t.latency_ms)),
          h("td", { class: "last num" }, fmtTime(t.last_time)),
        ),
      );
    }
  };
  put(page.threads);
  let cursor = page.next_cursor;
  more.addEventListener("click", async () => {
    const next = await api("/api/viewer/threads", { project, cursor });
    put(next.threads);
    cursor = next.next_cursor;
    more.hidden = !cursor;
  });
  delete main.dataset.traceId;
  clear(main).append(
    h("h1", {}, "Threads"),
    h("div", { class: "filters" }, h("label", {}, "Project", select)),
    page.threads.length === 0
      ? h("p", { class: "muted" }, "No threads yet. Runs join a thread when their metadata has session_id, thread_id or conversation_id.")
      : h(
          "table",
          { class: "traces threads" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Thread", "First message", "Last message", "Turns", "Tokens", "Cost", "Latency", "Last turn"].map((c) => h("th", {}, c)),
            ),
          ),
          tbody,
        ),
    more,
  );
}

export async function renderThread(main, threadId) {
  const project = projectFromHash();
  const { turns } = await api(`/api/viewer/threads/${encodeURIComponent(threadId)}`, { project });
  let tokens = 0;
  let cost = null;
  for (const t of turns) {
    tokens += t.total_tokens ?? 0;
    if (t.cost !== null) cost = (cost ?? 0) + t.cost;
  }
  delete main.dataset.traceId;
  clear(main).append(
    h(
      "nav",
      { class: "crumbs" },
      h("a", { href: project ? `#/threads?${new URLSearchParams({ project })}` : "#/threads" }, "Threads"),
      " / ",
      h("span", { class: "thread-title" }, threadId),
    ),
    h("h1", {}, "Thread ", h("span", { class: "thread-id" }, threadId)),
    h("p", { class: "muted" }, `${fmtInt(turns.length)} turns · ${fmtInt(tokens)} tokens · ${fmtCost(cost)}`),
    h(
      "ol",
      { class: "turns conversation", "aria-label": "Turns" },
      turns.map((t, i) =>
        h(
          "li",
          { class: `turn${t.error ? " err" : ""}`, dataset: { traceId: t.trace_id, turn: String(i + 1) } },
          h(
            "div",
            { class: "turn-head" },
            h("span", { class: "turn-no" }, `Turn ${i + 1}`),
            h("span", { class: "muted" }, ` · ${fmtTime(t.start_time)} · ${fmtMs(t.latency_ms)} · ${fmtInt(t.total_tokens)} tokens`),
            " ",
            h("a", { class: "turn-trace", href: `#/trace/${encodeURIComponent(t.trace_id)}` }, "Open trace"),
            t.error ? h("span", { class: "badge err", title: t.error }, "error") : null,
          ),
          h(
            "div",
            { class: "msg role-user" },
            h("div", { class: "role" }, "user"),
            t.user === null ? h("span", { class: "muted" }, "–") : folded(t.user, 2000, "text user-text"),
          ),
          h(
            "div",
            { class: "msg role-assistant" },
            h("div", { class: "role" }, "assistant"),
            t.assistant === null ? h("span", { class: "muted" }, "–") : folded(t.assistant, 2000, "text assistant-text"),
          ),
        ),
      ),
    ),
  );
}
