/** SPEC §2.6's reply shapes, told apart from streams and requests. */
import { isObj, type Obj } from "./guards.js";

/** `[role, content]`: two elements, the first a role name (a stream's elements are objects). */
export function isRolePair(v: unknown): v is [unknown, unknown] {
  return Array.isArray(v) && v.length === 2 && typeof v[0] === "string";
}

/**
 * The assistant message of a reply in one of SPEC §2.6's shapes other than a
 * vendor's own response object: `{choices:[{message}]}` (without the vendor's
 * `object`/`type` marker), `{message}`, a bare `{role, content}` and `[role, content]`.
 * Undefined when the payload is none of these.
 */
export function replyMessage(v: unknown): Obj | undefined {
  if (isRolePair(v)) return { role: v[0], content: v[1] };
  if (!isObj(v)) return undefined;
  if (Array.isArray(v.choices)) {
    const c = v.choices[0];
    return v.choices.length > 0 && isObj(c) && isObj(c.message) ? c.message : undefined;
  }
  if (isObj(v.message) && !("messages" in v)) return v.message;
  if (v.role === "assistant" && "content" in v && !("messages" in v)) return v;
  return undefined;
}
