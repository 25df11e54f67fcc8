/**
 * An `Adapter` (types.ts) from what its folder provides: detection, the
 * request, reply and stream readers, the live stream accumulator, and the
 * format's `normalize`. Every adapter is assembled here, so the object each
 * `tracepipe/adapters/<name>` entry exports has one shape.
 */
import type { Adapter } from "../types.js";

export type AdapterParts = Pick<
  Adapter,
  "detect" | "normalizeRequest" | "normalizeResponse" | "normalizeStream" | "createStreamAccumulator"
>;

export function adapterOf(name: string, parts: AdapterParts, normalize: Adapter["normalize"]): Adapter {
  return {
    name,
    detect: parts.detect,
    normalizeRequest: parts.normalizeRequest,
    normalizeResponse: parts.normalizeResponse,
    normalizeStream: parts.normalizeStream,
    createStreamAccumulator: parts.createStreamAccumulator,
    normalize,
  };
}
