/** The record loop of the line-oriented commands (`normalize`, `validate`): read, hand each record over, count the invalid ones, map the outcome to an exit code. */
import type { Readable } from "node:stream";
import { InputError } from "../errors.js";
import { readInputs, writeLine, type InputRecord } from "./io.js";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit.js";

/**
 * Calls `each` with every record of `files` (or stdin) in order; `each` answers whether the
 * record was valid. An unreadable input (a missing file, say) ends the loop with a usage error
 * on stderr, prefixed with the command's name; records already handled stay written.
 */
export async function eachRecord(
  command: string,
  files: readonly string[],
  io: { stdin: Readable; stderr: NodeJS.WritableStream },
  opts: { maxLineBytes?: number },
  each: (rec: InputRecord & { file: string | undefined }) => Promise<boolean>,
): Promise<number> {
  let invalid = 0;
  try {
    for await (const rec of readInputs(files, io.stdin, { maxLineBytes: opts.maxLineBytes })) {
      if (!(await each(rec))) invalid++;
    }
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    await writeLine(io.stderr, `tracepipe ${command}: ${err.message}`);
    return EXIT_USAGE;
  }
  return invalid > 0 ? EXIT_INVALID : EXIT_OK;
}
