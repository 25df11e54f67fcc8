export { Run, RunPatch, RunEvent } from "./schema.js";
export { RunTree, type RunTreeInit } from "./tree.js";
export { uuidv7, nowMicros, isoMicros, dottedSegment } from "./ids.js";
export { serialize, serializeRecord } from "./serialize.js";
export { makeSafe, type SafeLimits, type SafeResult } from "./safe.js";
export { MemoryWriter } from "./memory.js";
export type { RunWriter } from "./writer.js";
