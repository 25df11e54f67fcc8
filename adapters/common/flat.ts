/**
 * Flattened span attributes back into objects: `p.0.message.role` and
 * `p.0.message.tool_calls.1.tool_call.id` under prefix `p` become
 * `[{message: {role, tool_calls: [, {tool_call: {id}}]}}]`. Numeric segments
 * are array positions, so indexes sort numerically (10 after 9, not after 1).
 * OTel attribute names are flat by design; conventions that index messages
 * (OpenInference, OpenLLMetry) all need this one inverse.
 */
import { put, type Obj } from "./guards.js";

type Tree = Obj | unknown[];

export function unflatten(attrs: Readonly<Record<string, unknown>>, prefix: string): unknown[] | undefined {
  const head = prefix + ".";
  let root: unknown[] | undefined;
  for (const key in attrs) {
    if (!key.startsWith(head)) continue;
    const path = key.slice(head.length).split(".");
    if (!/^\d+$/.test(path[0]!)) continue;
    root ??= [];
    let node: Tree = root;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i]!;
      const last = i === path.length - 1;
      const k: string | number = Array.isArray(node) ? Number(seg) : seg;
      if (Array.isArray(node) && !/^\d+$/.test(seg)) break; // a name where a position was expected: not ours
      // Own slots only: a `__proto__` segment must name a field, never reach a prototype (Object.prototype is everyone's).
      const slot = Object.hasOwn(node, k) ? (node as Record<string | number, unknown>)[k] : undefined;
      if (last) {
        if (Array.isArray(node)) node[k as number] = attrs[key];
        else put(node, k as string, attrs[key]);
        break;
      }
      let next = slot;
      if (typeof next !== "object" || next === null) {
        next = /^\d+$/.test(path[i + 1]!) ? [] : {};
        if (Array.isArray(node)) node[k as number] = next;
        else put(node, k as string, next);
      }
      node = next as Tree;
    }
  }
  // Holes (an index nobody set) are dropped; order is kept.
  return root?.filter((x) => x !== undefined);
}
