/**
 * OTLP JSON exports as a LogReader. A trace's spans may be spread over many
 * lines (one export request per line, children usually before their
 * parents), so the file's spans are first gathered by trace (TraceIndex, on
 * disk), then each whole trace becomes runs with the span processor's
 * conversion. The file is one unit for checkpoints: it is read from the start
 * each time it has anything new, and its runs' stable ids (from span ids)
 * make a second delivery an update, not a duplicate. Bad lines an earlier run
 * already reported are not reported again. Shards split the file by trace.
 */
import { traceToRuns } from "../otlp/convert.js";
import { plainSpans } from "../otlp/decode.js";
import { plainToSpanRecord } from "../otlp/records.js";
import type { Item, LogReader, ReadContext } from "./reader.js";
import type { Line } from "./lines.js";
import { lineRecord, unfinishedLine } from "./record.js";
import { linesFromStart } from "./reread.js";
import { traceNumber } from "./shard.js";
import { TraceIndex } from "./traces.js";

async function* readOtlp(ctx: ReadContext): AsyncGenerator<Item> {
  const traces = new TraceIndex();
  try {
    let last = { offset: ctx.from.offset, line: ctx.from.line };
    let anythingNew = false;
    let unfinished: Line | undefined;
    for await (const l of linesFromStart(ctx)) {
      if (l.unfinished) {
        unfinished = l;
        break;
      }
      const fresh = l.end > ctx.from.offset;
      const record = l.tooLong || l.text.trim() !== "";
      const own = ctx.owns(l.line - 1);
      let bad: Item["bad"];
      if (record) {
        try {
          for (const span of plainSpans(lineRecord(l, ctx.maxLineBytes), { required: true })) traces.add(span, l.line);
        } catch (err) {
          bad = { line: l.line, raw: l.text, error: err };
        }
      }
      if (!fresh) continue;
      anythingNew ||= record;
      last = { offset: l.end, line: l.line };
      // Every shard gathers every span; each reports only its own bad lines.
      yield record ? { line: l, own, bad: own ? bad : undefined } : { line: l };
    }
    if (anythingNew) {
      for (const traceId of traces.traceIds()) {
        if (!ctx.owns(traceNumber(traceId))) continue;
        for (const run of traceToRuns(traces.spans(traceId).map(plainToSpanRecord), { project: ctx.project })) yield { run };
      }
    }
    yield { done: last };
    if (unfinished) throw unfinishedLine(ctx.path, unfinished);
  } finally {
    traces.close();
  }
}

export const otlpReader: LogReader = {
  kind: "otlp-json",
  format: "otlp-json",
  matches: (v) => "resourceSpans" in v,
  read: readOtlp,
};
