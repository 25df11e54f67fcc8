/**
 * The LogReaders (reader.ts), one per input kind, in detection order. Line
 * formats map each line to a run (lineReader); OTLP files gather spans by
 * trace first (otlp-reader.ts). The pipeline owns delivery, dead letters and
 * checkpoints.
 */
import type { Run } from "../run/schema.js";
import { callToRun, type CallRecord } from "./convert.js";
import { batchResultCall, customId, genericCall, lonelyRequestCall, requestBody, type FileKind, type FormatName } from "./formats.js";
import { recordIdentity } from "./identity.js";
import { readLines, type Line } from "./lines.js";
import { checkedRun, lineRecord, unfinishedLine } from "./record.js";
import { linesFromStart } from "./reread.js";
import { otlpReader } from "./otlp-reader.js";
import type { BadLine, Item, LogReader, ReadContext } from "./reader.js";

type Obj = Record<string, unknown>;

/** A format whose every line is one record: `toRun` turns a parsed line into its run. */
function lineReader(
  kind: FileKind,
  format: LogReader["format"],
  matches: LogReader["matches"],
  toRun: (v: Obj, l: Line, ctx: ReadContext) => Run,
  join: { joinedTo?: FileKind; index?: (v: Obj) => { customId: string; body: unknown } } = {},
): LogReader {
  return {
    kind,
    format,
    matches,
    joinedTo: join.joinedTo,
    async *read(ctx) {
      if (ctx.joinOnly && join.index) return yield* indexRequests(kind, join.index, ctx);
      for await (const l of readLines(ctx.path, {
        offset: ctx.from.offset,
        line: ctx.from.line,
        hash: ctx.hash,
        maxLineBytes: ctx.maxLineBytes,
        onBytes: ctx.onBytes,
      })) {
        const item: Item = { line: l, done: { offset: l.end, line: l.line } };
        if (l.tooLong || l.text.trim()) {
          if (l.unfinished) throw unfinishedLine(ctx.path, l);
          item.own = ctx.owns(l.line - 1);
          if (item.own) {
            try {
              item.run = toRun(lineRecord(l, ctx.maxLineBytes), l, ctx);
            } catch (err) {
              item.bad = { line: l.line, raw: l.text, error: err };
            }
          }
        }
        yield item;
      }
    },
  };
}

/**
 * A request file given with its results file: every line goes into the join
 * index (every shard needs all of them), so it is read whole each time; its
 * bad lines are reported once, by the shard that owns them, and only past
 * what an earlier run already reported. Its lines are not counted as
 * records: the results lines they join are.
 */
async function* indexRequests(
  kind: FileKind,
  index: (v: Obj) => { customId: string; body: unknown },
  ctx: ReadContext,
): AsyncGenerator<Item> {
  let unfinished: Line | undefined;
  for await (const l of linesFromStart(ctx)) {
    if (l.unfinished) {
      unfinished = l;
      break;
    }
    const fresh = l.end > ctx.from.offset;
    let bad: BadLine | undefined;
    if (l.tooLong || l.text.trim()) {
      try {
        const { customId, body } = index(lineRecord(l, ctx.maxLineBytes));
        ctx.requests.add(kind, customId, body);
      } catch (err) {
        if (fresh && ctx.owns(l.line - 1)) bad = { line: l.line, raw: l.text, error: err };
      }
    }
    if (fresh) yield { bad, done: { offset: l.end, line: l.line } };
  }
  ctx.requests.commit();
  if (unfinished) throw unfinishedLine(ctx.path, unfinished);
}

/** A call record from a line, converted with the record's own identity (identity.ts). */
function callRun(call: CallRecord, l: Line, ctx: ReadContext): Run {
  return callToRun(call, {
    fingerprint: recordIdentity(l.text),
    file: ctx.path,
    line: l.line,
    project: ctx.project,
    fallbackMs: ctx.mtimeMs,
  });
}

/** A results line, with its request looked up in the join index. */
function resultRun(kind: FileKind, requestKind: FileKind) {
  return (v: Obj, l: Line, ctx: ReadContext): Run => {
    const request = ctx.requests.lookup(requestKind, customId(v));
    const call = batchResultCall(kind, v, request);
    if (request === undefined && ctx.requests.size > 0) call.metadata = { ...call.metadata, request_missing: true };
    return callRun(call, l, ctx);
  };
}

const has = (v: Obj, ...keys: string[]) => keys.every((k) => k in v);

/** In detection order: the most specific shapes first. */
export const READERS: readonly LogReader[] = [
  otlpReader,
  lineReader(
    "openai-batch-input",
    "openai-batch",
    (v) => has(v, "custom_id", "method", "url", "body"),
    (v, l, ctx) => callRun(lonelyRequestCall("openai-batch-input", v), l, ctx),
    {
      joinedTo: "openai-batch-output",
      index: (v) => ({ customId: customId(v), body: requestBody("openai-batch-input", v) }),
    },
  ),
  lineReader(
    "anthropic-batch-results",
    "anthropic-batch",
    (v) => has(v, "custom_id", "result"),
    resultRun("anthropic-batch-results", "anthropic-batch-requests"),
  ),
  lineReader(
    "anthropic-batch-requests",
    "anthropic-batch",
    (v) => has(v, "custom_id", "params"),
    (v, l, ctx) => callRun(lonelyRequestCall("anthropic-batch-requests", v), l, ctx),
    {
      joinedTo: "anthropic-batch-results",
      index: (v) => ({ customId: customId(v), body: requestBody("anthropic-batch-requests", v) }),
    },
  ),
  lineReader(
    "openai-batch-output",
    "openai-batch",
    (v) => "custom_id" in v && ("response" in v || "error" in v) && !("result" in v) && !("request" in v),
    resultRun("openai-batch-output", "openai-batch-input"),
  ),
  lineReader(
    "runs",
    "runs",
    (v) => "id" in v && "run_type" in v && ("trace_id" in v || "dotted_order" in v || "start_time" in v),
    (v, _l, ctx) => checkedRun(v, ctx.project),
  ),
  lineReader(
    "generic",
    "generic",
    (v) => ("request" in v || "response" in v) && !("custom_id" in v),
    (v, l, ctx) => callRun(genericCall(v, l.line), l, ctx),
  ),
];

export const READER: Readonly<Record<FileKind, LogReader>> = Object.fromEntries(READERS.map((r) => [r.kind, r])) as Record<
  FileKind,
  LogReader
>;

/** Which kind of file this is, from one parsed record (and the --format, when given). */
export function detectKind(value: unknown, format: FormatName = "auto"): FileKind | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const v = value as Obj;
  for (const r of READERS) {
    if (format !== "auto" && r.format !== format) continue;
    if (r.matches(v)) return r.kind;
  }
  // With --format generic, a line with a custom_id is still a generic record.
  if (format === "generic" && ("request" in v || "response" in v)) return "generic";
  return undefined;
}
