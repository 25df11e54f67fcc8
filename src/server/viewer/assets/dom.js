/* global document, location, Blob, Node, atob */
// DOM building for the viewer. Run content is untrusted: it only ever becomes
// text nodes (createTextNode) or attribute values set through the DOM, never
// markup. There is no innerHTML anywhere in the viewer.

/** h("div", {class: "x", onclick: fn}, "text", child, [more]) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "href") el.setAttribute("href", safeHref(v));
    else if (k === "src") el.src = v;
    else if (k === "style")
      Object.assign(el.style, v); // CSSOM, allowed by the CSP (no inline style attributes)
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "hidden" || k === "checked" || k === "open" || k === "disabled" || k === "selected" || k === "controls")
      el[k] = Boolean(v);
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Only same-page, http(s) and blob: links; anything else (javascript:, data:...) becomes inert. */
export function safeHref(v) {
  const s = String(v);
  if (s.startsWith("#")) return s;
  try {
    const u = new URL(s, location.href);
    if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "blob:") return u.href;
  } catch {
    // not a URL
  }
  return "#";
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(2)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

export function fmtInt(n) {
  return n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US");
}

export function fmtCost(c) {
  if (c === null || c === undefined) return "–";
  return c < 0.01 ? `$${c.toFixed(6)}` : `$${c.toFixed(4)}`;
}

/** A cost on a chart axis: the tick's own digits, no trailing zeros ("$0", "$0.0005", "$1.5"). */
export function fmtCostAxis(c) {
  if (c === null || c === undefined) return "";
  return `$${Number(c).toLocaleString("en-US", { maximumSignificantDigits: 4 })}`;
}

export function fmtTime(t) {
  if (!t) return "–";
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString("en-GB", { hour12: false });
}

export function msBetween(a, b) {
  if (!a || !b) return null;
  const d = Date.parse(b) - Date.parse(a);
  return Number.isFinite(d) ? d : null;
}

export function json(v) {
  return JSON.stringify(v, null, 2);
}

/** A blob: URL for base64 content, or null when it is not valid base64. */
export function blobUrl(base64, mime) {
  try {
    const bin = atob(String(base64).replace(/\s+/g, ""));
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return URL.createObjectURL(new Blob([bytes], { type: mime || "application/octet-stream" }));
  } catch {
    return null;
  }
}

/** Long text folded to `max` characters with a button that shows the rest. */
export function folded(text, max = 2000, cls = "text") {
  const s = String(text);
  const pre = h("div", { class: cls }, s.length > max ? s.slice(0, max) + "…" : s);
  if (s.length <= max) return pre;
  const btn = h("button", { class: "link fold", type: "button" }, `Show all (${s.length.toLocaleString("en-US")} characters)`);
  btn.addEventListener("click", () => {
    pre.textContent = s;
    btn.remove();
  });
  return h("div", {}, pre, btn);
}

/** A stored time as a datetime-local input shows it (local time, to the minute); empty when there is none. */
export function toLocal(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
