/* global document, location, window */
// The viewer's entry: hash routes (#/ list, #/trace/<id>[/<run id>], #/threads,
// #/thread/<id>, #/monitor), sign-in,
// and one poller at a time for live updates.
import { AuthError, setKey, clearKey, hasKey } from "./api.js";
import { h, clear } from "./dom.js";
import { renderList } from "./list.js";
import { renderTrace } from "./trace.js";
import { renderThreads, renderThread } from "./threads.js";
import { renderMonitor } from "./monitor.js";

const main = document.getElementById("main");
const live = document.getElementById("live");
const signout = document.getElementById("signout");
let timer = null;
let generation = 0;

function stopPolling() {
  if (timer) clearTimeout(timer);
  timer = null;
  live.textContent = "";
}

function signIn(message) {
  stopPolling();
  const key = h("input", { type: "password", name: "key", autocomplete: "current-password", required: true, id: "api-key" });
  const form = h(
    "form",
    { class: "signin", id: "signin" },
    h("h1", {}, "Sign in"),
    h("p", {}, message),
    h("label", {}, "API key", key),
    h("button", { type: "submit" }, "Sign in"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    setKey(key.value);
    void route();
  });
  delete main.dataset.traceId;
  clear(main).append(form);
  key.focus();
}

function fail(err) {
  if (err instanceof AuthError)
    return signIn(hasKey() ? "That API key was refused. Try again." : "This collector needs its API key (serve --api-key).");
  stopPolling();
  delete main.dataset.traceId;
  clear(main).append(
    h(
      "div",
      { class: "error-box" },
      h("h2", {}, "Could not load"),
      h("p", {}, String(err?.message ?? err)),
      h("a", { href: "#/" }, "Back to traces"),
    ),
  );
}

async function route() {
  stopPolling();
  const gen = ++generation;
  const ctx = {
    fail,
    // Re-run `fn` every `ms` while this page is shown; errors show once, then the poller stops.
    poll(fn, ms) {
      const tick = async () => {
        if (gen !== generation) return;
        try {
          await fn();
          live.textContent = "live";
          timer = setTimeout(tick, ms);
        } catch (err) {
          if (gen === generation) fail(err);
        }
      };
      timer = setTimeout(tick, ms);
      live.textContent = "live";
    },
  };
  const hash = location.hash.replace(/^#/, "") || "/";
  const path = hash.split("?")[0];
  const m = /^\/trace\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  try {
    signout.hidden = !hasKey();
    const thread = /^\/thread\/([^/]+)$/.exec(path);
    if (m) await renderTrace(main, decodeURIComponent(m[1]), m[2] ? decodeURIComponent(m[2]) : undefined, ctx);
    else if (thread) await renderThread(main, decodeURIComponent(thread[1]), ctx);
    else if (path === "/threads") await renderThreads(main, ctx);
    else if (path === "/monitor") await renderMonitor(main, ctx);
    else await renderList(main, ctx);
  } catch (err) {
    if (gen === generation) fail(err);
  }
}

signout.addEventListener("click", () => {
  clearKey();
  void route();
});
window.addEventListener("hashchange", () => void route());
void route();
