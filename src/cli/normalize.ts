/** `tracepipe normalize [--format F] [FILE|-]`: vendor payloads in, native records out (DESIGN "CLI"). */
import type { Command } from "commander";
import { FORMAT_NAMES } from "../../adapters/index.js";
import { ValidationError } from "../errors.js";
import { normalize } from "../normalize.js";
import { writeLine } from "./io.js";
import { whereOf } from "./files.js";
import { EXIT_USAGE } from "./exit.js";
import { maxLineBytesOption } from "./options.js";
import { eachRecord } from "./record-loop.js";

export interface NormalizeCommandOptions {
  /** Longest input line; a longer one is reported and skipped. Default DEFAULT_MAX_LINE_BYTES (64 MiB). */
  maxLineBytes?: number;
  format: string;
}

export async function runNormalize(
  files: readonly string[],
  opts: NormalizeCommandOptions,
  io = { stdin: process.stdin, stdout: process.stdout as NodeJS.WritableStream, stderr: process.stderr as NodeJS.WritableStream },
): Promise<number> {
  if (opts.format !== "auto" && !FORMAT_NAMES.includes(opts.format)) {
    await writeLine(
      io.stderr,
      `tracepipe normalize: unknown --format ${JSON.stringify(opts.format)}; expected auto, ${FORMAT_NAMES.join(", ")}`,
    );
    return EXIT_USAGE;
  }
  const where = whereOf(files);
  return eachRecord("normalize", files, io, opts, async (rec) => {
    if ("error" in rec) {
      await writeLine(io.stderr, JSON.stringify({ ...where(rec), error: rec.error }));
      return false;
    }
    try {
      await writeLine(io.stdout, JSON.stringify(normalize(rec.value, { format: opts.format })));
      return true;
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      for (const issue of err.issues) await writeLine(io.stderr, JSON.stringify({ ...where(rec), error: issue }));
      return false;
    }
  });
}

export function register(program: Command): void {
  const command = program
    .command("normalize")
    .summary("normalize vendor payloads into native messages")
    .description(
      [
        "Normalize vendor payloads (OpenAI chat-completions, Anthropic Messages, native reply shapes) into native messages.",
        'Input: JSON or JSONL from FILES (glob patterns are expanded, e.g. \'logs/*.jsonl\') or stdin; a record is a request body, a response body, an array of stream chunks/events, or {"request": ..., "response": ...}.',
        'Output: one JSON line per record on stdout, {"format", "inputs"?: {"messages"}, "outputs"?: {"messages"}, "metadata": {"trace_provider", "trace_model_name"}}, which `tracepipe validate` reads as it is.',
        'An invalid record prints {"line": N, "error": {"loc", "msg", "type"}} on stderr (with "file" when several files are read) and the rest still run.',
        "Exit codes: 0 all records normalized, 1 some records invalid, 2 usage error.",
      ].join("\n\n"),
    )
    .argument("[files...]", "JSON or JSONL files or glob patterns; '-' or nothing reads stdin")
    .option("-f, --format <format>", `input format: auto, ${FORMAT_NAMES.join(", ")}`, "auto");
  maxLineBytesOption(command, "longest input line; a longer one is reported with its number and skipped").action(
    async (files: string[], opts: NormalizeCommandOptions) => {
      process.exitCode = await runNormalize(files, opts);
    },
  );
}
