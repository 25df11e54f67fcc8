/**
 * A full garbage collection on demand, for the collector's large bodies
 * (used by multipart.ts).
 *
 * Reading a 60 MB part leaves its raw bytes behind as garbage (the socket's
 * chunks, busboy's concatenation of them), and parsing it then allocates the
 * parsed value: V8 does not collect before that allocation, so the peak held
 * the garbage, the text and the value at once, about twice what the text and
 * the value need. Collecting between the two steps is what keeps a large
 * request's peak near what it must hold. It costs one full collection (a few
 * milliseconds to tens of them) per part of more than GC_PART_CHARS, which
 * is small next to reading and storing such a part.
 *
 * `gc` is a global only when Node was started with --expose-gc. Otherwise the
 * flag is set now; V8 then gives new contexts a `gc` function (that is all the
 * flag does after start-up), and one is made to fetch it. If that fails, the
 * collector simply goes without.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** Parts at least this long (characters of JSON text, or bytes) get a collection before they are parsed. */
export const GC_PART_CHARS = 8 * 1024 * 1024;

let collect: (() => void) | null | undefined;

function obtain(): (() => void) | null {
  const existing = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === "function") return existing as () => void;
  try {
    setFlagsFromString("--expose-gc");
    const fn: unknown = runInNewContext("typeof gc === 'function' ? gc : undefined");
    return typeof fn === "function" ? (fn as () => void) : null;
  } catch {
    return null;
  }
}

/** Runs a full collection when one can be had; false when this process cannot. */
export function collectGarbage(): boolean {
  if (collect === undefined) collect = obtain();
  if (!collect) return false;
  collect();
  return true;
}
