/** `tracepipe validate [--strict] [FILE|-]`: check native `{messages}` records (DESIGN "CLI"). */
import { InvalidArgumentError, type Command } from "commander";
import { DEFAULT_MAX_LINE_BYTES } from "../backfill/lines.js";
import { validate } from "../format/validate.js";
import type { Issue } from "../errors.js";
import { InputError, openInput, readRecords, writeLine } from "./io.js";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit.js";

export interface ValidateCommandOptions {
  /** Longest input line; a longer one is reported and skipped. Default DEFAULT_MAX_LINE_BYTES (64 MiB). */
  maxLineBytes?: number;
  strict?: boolean;
}

/** A record is `{messages: [...]}` (a run's inputs or outputs) or a bare messages array. */
function messagesOf(value: unknown): { messages: unknown; prefix: (string | number)[] } | Issue {
  if (Array.isArray(value)) return { messages: value, prefix: [] };
  if (typeof value === "object" && value !== null && "messages" in value) return { messages: (value as { messages: unknown }).messages, prefix: ["messages"] };
  return { loc: [], msg: 'expected {"messages": [...]} or a messages array', type: "record_type" };
}

export async function runValidate(file: string | undefined, opts: ValidateCommandOptions, io = { stdin: process.stdin, stdout: process.stdout as NodeJS.WritableStream, stderr: process.stderr as NodeJS.WritableStream }): Promise<number> {
  let input;
  try {
    input = openInput(file, io.stdin);
  } catch (err) {
    if (err instanceof InputError) {
      await writeLine(io.stderr, `tracepipe validate: ${err.message}`);
      return EXIT_USAGE;
    }
    throw err;
  }
  let invalid = 0;
  for await (const rec of readRecords(input, { maxLineBytes: opts.maxLineBytes })) {
    let issues: Issue[];
    if ("error" in rec) issues = [rec.error];
    else {
      const m = messagesOf(rec.value);
      issues = "loc" in m ? [m] : validate(m.messages, { strict: opts.strict === true }).map((i) => ({ ...i, loc: [...m.prefix, ...i.loc] }));
    }
    if (issues.length) invalid++;
    for (const i of issues) await writeLine(io.stderr, JSON.stringify({ line: rec.line, loc: i.loc, msg: i.msg, type: i.type }));
    await writeLine(io.stdout, JSON.stringify({ line: rec.line, valid: issues.length === 0, errors: issues.length }));
  }
  return invalid > 0 ? EXIT_INVALID : EXIT_OK;
}

export function register(program: Command): void {
  program
    .command("validate")
    .summary("check native {messages} records")
    .description(
      'Check native records ({"messages": [...]} or a bare messages array), JSON or JSONL from FILE or stdin.\n' +
        'stdout: one {"line", "valid", "errors"} line per record; stderr: one {"line", "loc", "msg", "type"} line per problem.\n' +
        "Checks the schema, tool_call_id linkage, server_tool_result status and media sources.\n" +
        "Exit codes: 0 all valid, 1 some records invalid, 2 usage error.",
    )
    .argument("[file]", "JSON or JSONL file; '-' or nothing reads stdin")
    .option("--strict", "hold to the format's letter: base64 required on media blocks, no extras", false)
    .option("--max-line-bytes <n>", "longest input line; a longer one is reported with its number and skipped", (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("--max-line-bytes must be a positive integer");
      return n;
    }, DEFAULT_MAX_LINE_BYTES)
    .action(async (file: string | undefined, opts: ValidateCommandOptions) => {
      process.exitCode = await runValidate(file, opts);
    });
}
