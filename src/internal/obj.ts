/** The one plain-object guard: a JSON object, not null, not an array. */
export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * `o[k] = v` for a key that came from data. Assigning `"__proto__"` (an own key
 * JSON.parse makes) would replace `o`'s prototype instead of adding the field:
 * the field would be lost and its value's keys would show through for-in.
 */
export function put(o: Obj, k: string, v: unknown): void {
  if (k === "__proto__") Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** `Object.assign(o, src)` for data objects: every own key of `src` goes in with `put`. */
export function putAll(o: Obj, src: Obj): Obj {
  for (const k in src) if (Object.hasOwn(src, k)) put(o, k, src[k]);
  return o;
}
