/** Option parsers the commands share, so one flag means and checks the same thing everywhere. */
import { InvalidArgumentError, type Command } from "commander";
import { DEFAULT_MAX_LINE_BYTES } from "../backfill/lines.js";
import { canonicalTime } from "../store/time.js";

/** A commander parser for an integer of at least 1 (and at most `max`); anything else is a usage error naming the option. */
export function positiveInt(name: string, max = Infinity): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer`);
    if (n > max) throw new InvalidArgumentError(`${name} must be at most ${max}`);
    return n;
  };
}

/**
 * A commander parser for a point in time (ISO 8601, or what Date reads); a
 * store compares times as text, so anything else would silently match nothing.
 */
export function timeArg(name: string): (v: string) => string {
  return (v: string) => {
    if (canonicalTime(v) === undefined) throw new InvalidArgumentError(`${name} must be a time such as 2026-11-20 or 2026-11-20T10:00:00Z`);
    return v;
  };
}

/** `--max-line-bytes <n>`, default DEFAULT_MAX_LINE_BYTES; `help` says what happens to a longer line. */
export function maxLineBytesOption(command: Command, help: string): Command {
  return command.option("--max-line-bytes <n>", help, positiveInt("--max-line-bytes"), DEFAULT_MAX_LINE_BYTES);
}
