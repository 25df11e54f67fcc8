// Native messages (SPEC §2.6) as a conversation. Every string from the run is
// placed as text; media become blob: URLs built from base64; a run's media
// URLs are shown as links and never fetched by the viewer.
import { h, blobUrl, folded, json } from "./dom.js";

const ROLES = new Set(["system", "reasoning", "user", "assistant", "tool"]);

function extrasNote(extras) {
  if (!extras || typeof extras !== "object" || Object.keys(extras).length === 0) return null;
  return h("details", { class: "extras" }, h("summary", {}, "extras"), h("pre", { class: "json" }, json(extras)));
}

function media(b) {
  const kind = b.type;
  const name = b.extras?.filename ?? b.extras?.name;
  const label = `${kind}${b.mime_type ? ` (${b.mime_type})` : ""}${name ? ` ${name}` : ""}`;
  if (typeof b.base64 === "string") {
    const url = blobUrl(b.base64, b.mime_type);
    if (!url) return h("div", { class: "block media bad" }, `${label}: base64 that does not decode`);
    if (kind === "image")
      return h("figure", { class: "block media image" }, h("img", { src: url, alt: label }), h("figcaption", {}, label));
    if (kind === "audio")
      return h("figure", { class: "block media audio" }, h("audio", { src: url, controls: true }), h("figcaption", {}, label));
    if (kind === "video")
      return h("figure", { class: "block media video" }, h("video", { src: url, controls: true }), h("figcaption", {}, label));
    return h(
      "div",
      { class: "block media file" },
      h("a", { href: url, download: name ?? "file" }, `Download ${label}`),
      ` · ${Math.round((b.base64.length * 3) / 4).toLocaleString("en-US")} bytes`,
    );
  }
  if (typeof b.url === "string") {
    return h(
      "div",
      { class: "block media url" },
      `${label} at `,
      h("a", { href: b.url, target: "_blank", rel: "noopener noreferrer" }, b.url),
      h("span", { class: "muted" }, " (not loaded by the viewer)"),
    );
  }
  return h("div", { class: "block media id" }, `${label}, stored as id `, h("code", {}, String(b.id ?? "?")));
}

function toolResult(m) {
  const err = m.extras?.is_error;
  return h(
    "div",
    { class: `tool-result${err ? " err" : ""}`, dataset: { toolCallId: m.tool_call_id ?? "" } },
    h("div", { class: "head" }, err ? "Tool result (error)" : "Tool result"),
    (m.content ?? []).map((b) => block(b, null)),
    extrasNote(m.extras),
  );
}

function serverResult(b) {
  return h(
    "div",
    { class: `server-tool-result${b.status === "error" ? " err" : ""}`, dataset: { toolCallId: b.tool_call_id } },
    h("div", { class: "head" }, `Server tool result · ${b.status}`),
    b.output === undefined ? null : h("pre", { class: "json" }, typeof b.output === "string" ? b.output : json(b.output)),
  );
}

/** One content block. `links` maps a call id to the tool messages / server results that answer it. */
function block(b, links) {
  if (!b || typeof b !== "object") return h("pre", { class: "json block" }, json(b));
  switch (b.type) {
    case "text":
      return h(
        "div",
        { class: `block textblock${b.extras?.refusal ? " refusal" : ""}` },
        b.extras?.refusal ? h("span", { class: "badge err" }, "refusal") : null,
        folded(b.text ?? ""),
        extrasNote(b.extras),
      );
    case "reasoning":
      return h(
        "details",
        { class: "block reasoning" },
        h(
          "summary",
          {},
          b.extras?.redacted ? "Reasoning (redacted)" : `Reasoning (${(b.text ?? "").length.toLocaleString("en-US")} characters)`,
        ),
        folded(b.text ?? "", 4000),
      );
    case "image":
    case "audio":
    case "video":
    case "file":
      return media(b);
    case "tool_call": {
      const answers = (b.id && links?.tool.get(b.id)) || [];
      return h(
        "div",
        { class: "block tool-call", dataset: { toolCallId: b.id ?? "" } },
        h(
          "div",
          { class: "head" },
          "Tool call ",
          h("strong", {}, b.name ?? "(unnamed)"),
          b.id ? h("code", { class: "muted" }, ` ${b.id}`) : null,
        ),
        h("pre", { class: "json args" }, json(b.args ?? {})),
        b.extras?.args_error ? h("div", { class: "badge err" }, `arguments did not parse: ${b.extras.args_error}`) : null,
        answers.map(toolResult),
        answers.length === 0 ? h("div", { class: "muted" }, "no result in this run") : null,
      );
    }
    case "server_tool_call": {
      const answers = links?.server.get(b.id) || [];
      return h(
        "div",
        { class: "block server-tool-call", dataset: { toolCallId: b.id } },
        h("div", { class: "head" }, "Server tool call ", h("strong", {}, b.name), h("code", { class: "muted" }, ` ${b.id}`)),
        h("pre", { class: "json args" }, json(b.args ?? {})),
        answers.map(serverResult),
      );
    }
    case "server_tool_result":
      return links?.claimed.has(b) ? null : serverResult(b);
    default:
      return h(
        "div",
        { class: "block unknown" },
        h("div", { class: "head" }, `block of type ${String(b.type)}`),
        h("pre", { class: "json" }, json(b)),
      );
  }
}

/** Which tool messages and server results answer which calls, over the whole conversation. */
function linkResults(messages) {
  const calls = new Set();
  const server = new Set();
  for (const m of messages)
    for (const b of m?.content ?? []) {
      if (b?.type === "tool_call" && b.id) calls.add(b.id);
      if (b?.type === "server_tool_call") server.add(b.id);
    }
  const links = { tool: new Map(), server: new Map(), claimed: new Set(), claimedMessages: new Set() };
  for (const m of messages) {
    if (m?.role === "tool" && m.tool_call_id && calls.has(m.tool_call_id)) {
      if (!links.tool.has(m.tool_call_id)) links.tool.set(m.tool_call_id, []);
      links.tool.get(m.tool_call_id).push(m);
      links.claimedMessages.add(m);
    }
    for (const b of m?.content ?? []) {
      if (b?.type === "server_tool_result" && server.has(b.tool_call_id)) {
        if (!links.server.has(b.tool_call_id)) links.server.set(b.tool_call_id, []);
        links.server.get(b.tool_call_id).push(b);
        links.claimed.add(b);
      }
    }
  }
  return links;
}

function usageLine(u) {
  if (!u) return null;
  const parts = [`in ${u.input_tokens}`, `out ${u.output_tokens}`];
  if (u.input_token_details?.cache_read) parts.push(`cache read ${u.input_token_details.cache_read}`);
  if (u.input_token_details?.cache_creation) parts.push(`cache write ${u.input_token_details.cache_creation}`);
  if (u.output_token_details?.reasoning) parts.push(`reasoning ${u.output_token_details.reasoning}`);
  return h("span", { class: "usage muted" }, parts.join(" · "), u.estimated ? " (estimated)" : "");
}

/** Render input and output messages as one conversation (results linked across both). */
export function conversation(inputs, outputs) {
  const all = [...(inputs ?? []), ...(outputs ?? [])];
  const links = linkResults(all);
  const msg = (m, side) => {
    if (links.claimedMessages.has(m)) return null; // shown inside the call it answers
    const role = ROLES.has(m?.role) ? m.role : "unknown";
    return h(
      "div",
      { class: `msg role-${role} ${side}`, dataset: { role } },
      h(
        "div",
        { class: "role" },
        String(m?.role ?? "?"),
        m?.extras?.orphan ? h("span", { class: "badge" }, "result of a call not in this run") : null,
        m?.tool_call_id ? h("code", { class: "muted" }, ` ${m.tool_call_id}`) : null,
        usageLine(m?.usage_metadata),
      ),
      (Array.isArray(m?.content) ? m.content : []).map((b) => block(b, links)),
      extrasNote(m?.extras),
    );
  };
  return h(
    "div",
    { class: "conversation" },
    (inputs ?? []).map((m) => msg(m, "input")),
    outputs?.length ? h("div", { class: "divider" }, "output") : null,
    (outputs ?? []).map((m) => msg(m, "output")),
  );
}
