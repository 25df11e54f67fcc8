/** `tracepipe/backfill`: historical LLM logs (batch files, generic JSONL, OTLP JSON) into runs. */
export { backfill, type BackfillOptions, type BackfillResult } from "./pipeline.js";
export { FORMATS, type FormatName } from "./formats.js";
