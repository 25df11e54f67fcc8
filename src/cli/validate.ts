/** `tracepipe validate [--strict] [FILE|-]`: check native `{messages}` records (DESIGN "CLI"). */
import type { Command } from "commander";
import { validate } from "../format/validate.js";
import type { Issue } from "../errors.js";
import { writeLine } from "./io.js";
import { whereOf } from "./files.js";
import { maxLineBytesOption } from "./options.js";
import { eachRecord } from "./record-loop.js";
import type { Loc } from "../internal/types.js";

export interface ValidateCommandOptions {
  /** Longest input line; a longer one is reported and skipped. Default DEFAULT_MAX_LINE_BYTES (64 MiB). */
  maxLineBytes?: number;
  strict?: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Check one record. A record is a bare messages array, `{messages: [...]}` (a run's
 * inputs or outputs), or a `tracepipe normalize` output line
 * `{format, inputs?: {messages}, outputs?: {messages}, metadata}`. A normalize line is
 * checked as one conversation, inputs then outputs, so a tool result in the reply may
 * answer a call made in the request; each problem is placed back under the side it came from.
 */
export function checkRecord(value: unknown, strict: boolean): Issue[] {
  if (Array.isArray(value)) return validate(value, { strict });
  if (!isObject(value))
    return [{ loc: [], msg: 'expected {"messages": [...]}, a tracepipe normalize line or a messages array', type: "record_type" }];
  if ("messages" in value) return validate(value.messages, { strict }).map((i) => ({ ...i, loc: ["messages", ...i.loc] }));
  if (!("inputs" in value) && !("outputs" in value))
    return [
      {
        loc: [],
        msg: 'expected {"messages": [...]}, a tracepipe normalize line ({"inputs"?, "outputs"?}) or a messages array',
        type: "record_type",
      },
    ];
  const sides: { name: "inputs" | "outputs"; messages: unknown[] }[] = [];
  const issues: Issue[] = [];
  for (const name of ["inputs", "outputs"] as const) {
    const side = value[name];
    if (side === undefined) continue;
    if (!isObject(side))
      issues.push({
        loc: [name],
        msg: `expected {"messages": [...]}, got ${Array.isArray(side) ? "array" : side === null ? "null" : typeof side}`,
        type: "dict_type",
      });
    else if (!Array.isArray(side.messages))
      issues.push({
        loc: [name, "messages"],
        msg: `expected an array, got ${side.messages === null ? "null" : typeof side.messages}`,
        type: "list_type",
      });
    else sides.push({ name, messages: side.messages });
  }
  const all = sides.flatMap((s) => s.messages);
  // An index into the joined list, back to the side (and its own index) it came from.
  const place = (loc: Loc): Loc => {
    let index = loc[0];
    if (typeof index !== "number") return [sides[0]?.name ?? "inputs", "messages", ...loc];
    for (const s of sides) {
      if (index < s.messages.length) return [s.name, "messages", index, ...loc.slice(1)];
      index -= s.messages.length;
    }
    return loc;
  };
  return [...issues, ...validate(all, { strict }).map((i) => ({ ...i, loc: place(i.loc) }))];
}

export async function runValidate(
  files: readonly string[],
  opts: ValidateCommandOptions,
  io = { stdin: process.stdin, stdout: process.stdout as NodeJS.WritableStream, stderr: process.stderr as NodeJS.WritableStream },
): Promise<number> {
  const where = whereOf(files);
  return eachRecord("validate", files, io, opts, async (rec) => {
    const issues = "error" in rec ? [rec.error] : checkRecord(rec.value, opts.strict === true);
    for (const i of issues) await writeLine(io.stderr, JSON.stringify({ ...where(rec), loc: i.loc, msg: i.msg, type: i.type }));
    await writeLine(io.stdout, JSON.stringify({ ...where(rec), valid: issues.length === 0, errors: issues.length }));
    return issues.length === 0;
  });
}

export function register(program: Command): void {
  const command = program
    .command("validate")
    .summary("check native {messages} records")
    .description(
      [
        'Check native records, JSON or JSONL from FILES (glob patterns are expanded) or stdin. A record is {"messages": [...]}, a bare messages array, or a `tracepipe normalize` output line, whose inputs and outputs are checked as one conversation (so `tracepipe normalize logs.jsonl | tracepipe validate` works).',
        'stdout: one {"line", "valid", "errors"} line per record; stderr: one {"line", "loc", "msg", "type"} line per problem (with "file" when several files are read).',
        "Checks the schema, tool_call_id linkage, server_tool_result status and media sources.",
        "Exit codes: 0 all valid, 1 some records invalid, 2 usage error.",
      ].join("\n\n"),
    )
    .argument("[files...]", "JSON or JSONL files or glob patterns; '-' or nothing reads stdin")
    .option("--strict", "hold to the format's letter: base64 required on media blocks, no extras", false);
  maxLineBytesOption(command, "longest input line; a longer one is reported with its number and skipped").action(
    async (files: string[], opts: ValidateCommandOptions) => {
      process.exitCode = await runValidate(files, opts);
    },
  );
}
