/**
 * Input records for the line-oriented commands. A file (or stdin, `-`) is either
 * JSONL (one record per non-empty line, streamed) or one JSON document that may
 * span lines (pretty-printed). The first non-empty line decides when it parses
 * on its own: JSONL. When it does not, the next non-empty line decides: a
 * record on its own, starting at column 0 with `{` or `[`, means JSONL whose
 * first line is corrupt (reported, the rest processed); anything else (a
 * pretty-printer indents what is inside) means one document.
 * An array on one line is one record (a stream's chunks), never a list of records.
 * A line longer than `maxLineBytes` is reported with its number and skipped,
 * never held in memory.
 */
import { InputError } from "../errors.js";
import { createReadStream, statSync } from "node:fs";
import type { Readable } from "node:stream";
import { DEFAULT_MAX_LINE_BYTES, splitLines, type Line } from "../backfill/lines.js";
import { expandFileArgs } from "./files.js";
import type { Loc } from "../internal/types.js";

export type InputRecord = { line: number; value: unknown } | { line: number; error: { loc: Loc; msg: string; type: string } };

/** Throw the InputError `file` would meet when opened (missing, a directory); `-` or nothing is stdin. */
export function checkInput(file: string | undefined): void {
  if (file === undefined || file === "-") return;
  let st;
  try {
    st = statSync(file);
  } catch {
    throw new InputError(`no such file: ${file}`);
  }
  if (st.isDirectory()) throw new InputError(`${file} is a directory, expected a JSON or JSONL file`);
}

export function openInput(file: string | undefined, stdin: Readable = process.stdin): Readable {
  checkInput(file);
  return file === undefined || file === "-" ? stdin : createReadStream(file);
}

/**
 * The records of every input in turn (stdin when there are none), each with the
 * file it came from. Globs are expanded and every file is checked before the first
 * record, so a typo in the last argument fails fast (InputError) instead of after hours.
 */
export async function* readInputs(
  args: readonly string[],
  stdin: Readable,
  opts: { maxLineBytes?: number } = {},
): AsyncGenerator<InputRecord & { file: string | undefined }> {
  const files: (string | undefined)[] = args.length === 0 ? [undefined] : await expandFileArgs(args);
  for (const f of files) checkInput(f);
  for (const file of files) {
    for await (const rec of readRecords(openInput(file, stdin), opts)) yield { ...rec, file };
  }
}

/**
 * Where in a multi-line document a JSON.parse error is, as a 1-based line number.
 * Node 20 does not always say the position, so find the shortest prefix that
 * fails for a reason other than "the input ended early" (a binary search).
 */
function prefixEndsEarly(text: string, k: number): boolean {
  try {
    JSON.parse(text.slice(0, k));
    return true;
  } catch (err) {
    const msg = String((err as Error).message);
    const m = /position (\d+)/.exec(msg);
    if (m) return Number(m[1]) >= k;
    return /end of JSON input|Unterminated string/.test(msg);
  }
}

function errorLine(text: string, firstLine: number): number {
  let lo = 1;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (prefixEndsEarly(text, mid)) lo = mid + 1;
    else hi = mid;
  }
  let line = firstLine;
  for (let i = 0; i < lo - 1 && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function parseError(err: unknown): string {
  return `malformed JSON: ${(err as Error).message}`;
}

const jsonError = (line: number, err: unknown): InputRecord => ({ line, error: { loc: [], msg: parseError(err), type: "json_invalid" } });
const tooLong = (l: Line, max: number): InputRecord => ({
  line: l.line,
  error: {
    loc: [],
    msg: `line is ${l.end - l.offset} bytes, over the maximum line size of ${max} bytes (--max-line-bytes)`,
    type: "line_too_long",
  },
});

/** A line that is a whole JSONL record: it parses alone and starts at column 0 as an object or array. */
function standaloneRecord(raw: string): { value: unknown } | undefined {
  if (!/^[{[]/.test(raw)) return undefined;
  try {
    return { value: JSON.parse(raw) };
  } catch {
    return undefined;
  }
}

export async function* readRecords(input: Readable, opts: { maxLineBytes?: number } = {}): AsyncGenerator<InputRecord> {
  const max = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  // unknown: nothing yet; pending: the first line failed and the next decides; failed: a document with an over-long line
  let mode: "unknown" | "pending" | "jsonl" | "document" | "failed" = "unknown";
  let doc: string[] = [];
  let docStart = 0;
  let firstError: unknown;
  for await (const l of splitLines(input as AsyncIterable<Buffer>, { maxLineBytes: max })) {
    if (mode === "failed") continue;
    if (mode === "document") {
      if (l.tooLong) {
        yield tooLong(l, max);
        mode = "failed";
        doc = [];
      } else doc.push(l.text);
      continue;
    }
    if (l.tooLong) {
      if (mode === "pending") yield jsonError(docStart, firstError);
      yield tooLong(l, max);
      mode = "jsonl";
      continue;
    }
    const line = l.text.trim();
    if (line === "") {
      if (mode === "pending") doc.push(l.text);
      continue;
    }
    if (mode === "pending") {
      const rec = standaloneRecord(l.text);
      if (rec) {
        mode = "jsonl";
        yield jsonError(docStart, firstError);
        yield { line: l.line, value: rec.value };
      } else {
        mode = "document";
        doc.push(l.text);
      }
      continue;
    }
    try {
      const value: unknown = JSON.parse(line);
      mode = "jsonl";
      yield { line: l.line, value };
    } catch (err) {
      if (mode === "jsonl") {
        yield jsonError(l.line, err);
        continue;
      }
      mode = "pending";
      docStart = l.line;
      doc = [l.text];
      firstError = err;
    }
  }
  if (mode === "document" || mode === "pending") {
    const text = doc.join("\n");
    try {
      yield { line: docStart, value: JSON.parse(text) };
    } catch (err) {
      yield { line: errorLine(text, docStart), error: { loc: [], msg: parseError(err), type: "json_invalid" } };
    }
  }
}

/** Write one line to a stream, honouring back-pressure so large outputs stay in bounded memory. */
export async function writeLine(out: NodeJS.WritableStream, line: string): Promise<void> {
  if (!out.write(line + "\n")) await new Promise<void>((resolve) => out.once("drain", resolve));
}
