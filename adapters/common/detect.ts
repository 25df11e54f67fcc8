/**
 * The one shape of every payload adapter's `detect()`: an array is a stream
 * (or a SPEC §2.6 `[text, ...]` reply tuple), an object with `request` or
 * `response` is a pair when each side present is this format's, else the
 * object is a response, a request, or another reply shape. Each adapter brings
 * its recognisers; never throws (a recogniser that does means "not this format").
 */
import type { PayloadKind } from "../types.js";
import { isObj } from "./guards.js";

export interface Recognisers {
  isRequest(v: unknown): boolean;
  isResponse(v: unknown): boolean;
  isStream(v: unknown[]): boolean;
  /** SPEC §2.6's other reply shapes (a message, `{message}`, `[text, message]`): a response too. */
  isReply?(v: unknown): boolean;
  /** A request plain enough to be any vendor's, which this format claims when a response of its own is beside it. */
  settledByResponse?(request: unknown): boolean;
  /**
   * Which side of a pair is looked at first: the one that turns away other
   * formats' pairs soonest (detection tries every adapter in turn).
   */
  pairFirst: "request" | "response";
}

/** What a pair's response side must be for `r`'s format to claim the pair (whatever the request). */
export function isResponseSide(r: Recognisers, v: unknown): boolean {
  return r.isResponse(v) || (r.isReply !== undefined && r.isReply(v)) || (Array.isArray(v) && r.isStream(v));
}

/**
 * What one of the first elements of an array says: not this format's chunk (so
 * the array is no stream of it), a chunk that names no format alone (a ping, an
 * error, a usage-only chunk), or a chunk that does.
 */
export type ChunkProbe = "other" | "neutral" | "own";

/** The first few elements identify a stream; normalizing it checks every one and names a bad one by its position. */
const STREAM_PROBE = 4;

/** `isStream` from `probe`: non-empty, no probed element another format's, and one of them this format's own. */
export function streamOf(probe: (chunk: unknown) => ChunkProbe): (v: unknown[]) => boolean {
  return (v) => {
    const n = Math.min(v.length, STREAM_PROBE);
    let own = false;
    for (let i = 0; i < n; i++) {
      const p = probe(v[i]);
      if (p === "other") return false;
      if (p === "own") own = true;
    }
    return own;
  };
}

function pairKind(r: Recognisers, p: Record<string, unknown>): PayloadKind | null {
  const { request, response } = p;
  const hasReq = request !== undefined && request !== null;
  const hasRes = response !== undefined && response !== null;
  if (!hasReq && !hasRes) return null;
  if (r.pairFirst === "response") {
    if (hasRes && !isResponseSide(r, response)) return null;
    return !hasReq || r.isRequest(request) || (hasRes && r.settledByResponse !== undefined && r.settledByResponse(request)) ? "pair" : null;
  }
  if (hasReq && !r.isRequest(request) && !(hasRes && r.settledByResponse !== undefined && r.settledByResponse(request))) return null;
  return !hasRes || isResponseSide(r, response) ? "pair" : null;
}

/** `detect()` for the format `r` recognises. */
export function detector(r: Recognisers): (payload: unknown) => PayloadKind | null {
  return (payload) => {
    try {
      if (Array.isArray(payload)) {
        if (r.isReply && payload.length === 2 && typeof payload[0] === "string") return r.isReply(payload) ? "response" : null;
        return r.isStream(payload) ? "stream" : null;
      }
      if (!isObj(payload)) return null;
      if ("request" in payload || "response" in payload) return pairKind(r, payload);
      if (r.isResponse(payload)) return "response";
      if (r.isRequest(payload)) return "request";
      return r.isReply !== undefined && r.isReply(payload) ? "response" : null;
    } catch {
      return null;
    }
  };
}
