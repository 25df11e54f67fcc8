/**
 * validate(messages, {strict}) -> every problem as SPEC §7's {loc, msg, type}.
 *
 * Shape errors come from the zod schema (strict objects). On top of the shape,
 * the cross-field rules of SPEC §2.6 and DESIGN:
 * - `tool_call_id` only on role `tool`, naming a tool_call in an EARLIER assistant message
 *   (non-strict: or the message says `extras.orphan: true`, a result whose call was trimmed away);
 * - server_tool_result `status` is `success` or `error`;
 * - a media block has exactly one source: base64 (+ mime_type), url, or id.
 * With `strict`, SPEC's letter: `base64` is required on media blocks and no `extras` anywhere.
 * The rules run on the raw input too, so one bad field never hides another.
 */
import type { z } from "zod";
import type { Issue } from "../errors.js";
import { nativeSchemas } from "./schema.js";
import { surelyMessages, surelyValid } from "./shape.js";

export interface ValidateOptions {
  /** Hold to SPEC's letter: media blocks need base64, and `extras` is not allowed. */
  strict?: boolean;
}

const MEDIA = new Set(["image", "file", "audio", "video"]);

import { isObj, type Obj } from "../internal/obj.js";
import type { Loc } from "../internal/types.js";

/** zod's issue codes name the rule; keep them as the `type` (SPEC §7 leaves `type` free). */
function fromZod(issues: z.core.$ZodIssue[], out: Issue[]): void {
  for (const i of issues) {
    if (i.code === "unrecognized_keys") {
      for (const k of i.keys)
        out.push({
          loc: [...(i.path as Loc), k],
          msg: `unknown field ${JSON.stringify(k)}; vendor fields belong in extras`,
          type: "unrecognized_key",
        });
      continue;
    }
    out.push({ loc: i.path as Loc, msg: i.message, type: i.code });
  }
}

function checkMedia(b: Obj, loc: Loc, strict: boolean, out: Issue[]): void {
  const sources = ["base64", "url", "id"].filter((k) => b[k] !== undefined);
  if (sources.length !== 1) {
    out.push({
      loc,
      msg:
        sources.length === 0
          ? `a ${String(b.type)} block needs one source: base64 (with mime_type), url or id`
          : `a ${String(b.type)} block has ${sources.length} sources (${sources.join(", ")}); exactly one is allowed`,
      type: "media_source",
    });
  }
  if (b.base64 !== undefined && b.mime_type === undefined)
    out.push({ loc: [...loc, "mime_type"], msg: "mime_type is required with base64", type: "missing" });
  if (strict && b.base64 === undefined)
    out.push({ loc: [...loc, "base64"], msg: "base64 is required on media blocks (SPEC §2.6)", type: "missing" });
}

export function validate(messages: unknown, opts: ValidateOptions = {}): Issue[] {
  const strict = opts.strict === true;
  // The usual case, well-formed messages with nothing to say: one walk (shape.ts).
  if (!strict && surelyValid(messages)) return [];
  return everyIssue(messages, strict);
}

/** validate without its fast path: every issue, the shape's from zod. Exported for the tests that hold the fast path to it. */
export function everyIssue(messages: unknown, strict: boolean): Issue[] {
  const out: Issue[] = [];
  // The usual, well-formed case skips zod (shape.ts says yes only when zod would); issues always come from zod.
  if (!surelyMessages(messages)) {
    const parsed = nativeSchemas().Messages.safeParse(messages);
    if (!parsed.success) fromZod(parsed.error.issues, out);
  }
  if (!Array.isArray(messages)) return out;

  const toolCallIds = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m)) continue;
    if (strict && m.extras !== undefined)
      out.push({ loc: [i, "extras"], msg: "extras are not allowed in strict mode", type: "extra_forbidden" });
    if (m.tool_call_id !== undefined) {
      if (m.role !== "tool") {
        out.push({
          loc: [i, "tool_call_id"],
          msg: `tool_call_id is only valid on role "tool", not ${JSON.stringify(m.role)}`,
          type: "tool_call_id_role",
        });
      } else if (
        typeof m.tool_call_id === "string" &&
        !toolCallIds.has(m.tool_call_id) &&
        !(!strict && isObj(m.extras) && m.extras.orphan === true)
      ) {
        // DESIGN: a tool result from a trimmed history carries extras.orphan; non-strict accepts it in place of the link.
        out.push({
          loc: [i, "tool_call_id"],
          msg: `tool_call_id ${JSON.stringify(m.tool_call_id)} names no tool call in an earlier assistant message`,
          type: "unknown_tool_call_id",
        });
      }
    }
    if (strict && isObj(m.usage_metadata) && m.usage_metadata.extras !== undefined) {
      out.push({ loc: [i, "usage_metadata", "extras"], msg: "extras are not allowed in strict mode", type: "extra_forbidden" });
    }
    const content = m.content;
    if (!Array.isArray(content)) continue;
    for (let j = 0; j < content.length; j++) {
      const b = content[j];
      if (!isObj(b)) continue;
      const loc = [i, "content", j];
      if (strict && b.extras !== undefined)
        out.push({ loc: [...loc, "extras"], msg: "extras are not allowed in strict mode", type: "extra_forbidden" });
      if (typeof b.type === "string" && MEDIA.has(b.type)) checkMedia(b, loc, strict, out);
      else if (b.type === "tool_call" && m.role === "assistant" && typeof b.id === "string") toolCallIds.add(b.id);
    }
  }
  return out;
}
