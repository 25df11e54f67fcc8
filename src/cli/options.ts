/** Option parsers the commands share, so one flag means and checks the same thing everywhere. */
import { InvalidArgumentError, type Command } from "commander";
import { DEFAULT_MAX_LINE_BYTES } from "../backfill/lines.js";

/** A commander parser for an integer of at least 1; anything else is a usage error naming the option. */
export function positiveInt(name: string): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer`);
    return n;
  };
}

/** `--max-line-bytes <n>`, default DEFAULT_MAX_LINE_BYTES; `help` says what happens to a longer line. */
export function maxLineBytesOption(command: Command, help: string): Command {
  return command.option("--max-line-bytes <n>", help, positiveInt("--max-line-bytes"), DEFAULT_MAX_LINE_BYTES);
}
