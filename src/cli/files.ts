/**
 * File arguments of `backfill`, `normalize` and `validate`, with globs expanded by
 * the CLI itself: a quoted `'logs/*.jsonl.gz'` (or a shell that does not expand,
 * like cmd.exe or an npm script on Windows) reaches us as the pattern.
 */
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { glob, isDynamicPattern } from "tinyglobby";
import { InputError } from "../errors.js";

/**
 * Each argument, in the order given: `-` and a path that exists are taken as they
 * are (a file may well be named `run[1].jsonl`); a glob pattern becomes the files it
 * matches, sorted so runs are repeatable; anything else is left for the command to
 * report as a missing file. A pattern that matches nothing is an InputError (exit 2).
 */
export async function expandFileArgs(args: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const arg of args) {
    if (arg === "-" || existsSync(arg) || !isDynamicPattern(arg)) {
      out.push(arg);
      continue;
    }
    const matches = await glob(arg, { absolute: isAbsolute(arg), onlyFiles: true, expandDirectories: false });
    if (matches.length === 0) throw new InputError(`no file matches the pattern ${arg}`);
    out.push(...matches.sort());
  }
  return out;
}

/**
 * Where a record came from, as the line-oriented commands print it: the line alone
 * for one named input, with the file too when several files or a
 * pattern are read, since line numbers alone would be ambiguous.
 */
export function whereOf(args: readonly string[]): (rec: { file: string | undefined; line: number }) => { file?: string; line: number } {
  const several = args.length > 1 || args.some((a) => a !== "-" && !existsSync(a) && isDynamicPattern(a));
  return (rec) => (several && rec.file !== undefined ? { file: rec.file, line: rec.line } : { line: rec.line });
}
