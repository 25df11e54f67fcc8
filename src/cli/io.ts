/**
 * Input records for the line-oriented commands. A file (or stdin, `-`) is either
 * JSONL (one record per non-empty line, streamed) or one JSON document that may
 * span lines (pretty-printed). The first non-empty line decides: if it parses
 * on its own the input is JSONL; otherwise the whole input is one document.
 * An array on one line is one record (a stream's chunks), never a list of records.
 */
import { TracepipeError } from "../errors.js";
import { createReadStream, statSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";

export type InputRecord = { line: number; value: unknown } | { line: number; error: { loc: (string | number)[]; msg: string; type: string } };

/** An input file cannot be read (missing, a directory, not gzip): a usage error, exit 2. */
export class InputError extends TracepipeError {
  override name = "InputError";
}

export function openInput(file: string | undefined, stdin: Readable = process.stdin): Readable {
  if (file === undefined || file === "-") return stdin;
  let st;
  try {
    st = statSync(file);
  } catch {
    throw new InputError(`no such file: ${file}`);
  }
  if (st.isDirectory()) throw new InputError(`${file} is a directory, expected a JSON or JSONL file`);
  return createReadStream(file);
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

export async function* readRecords(input: Readable): AsyncGenerator<InputRecord> {
  const rl = createInterface({ input, crlfDelay: Infinity });
  let mode: "unknown" | "jsonl" | "document" = "unknown";
  let doc: string[] = [];
  let docStart = 0;
  let n = 0;
  for await (const raw of rl) {
    n++;
    if (mode === "document") {
      doc.push(raw);
      continue;
    }
    const line = raw.trim();
    if (line === "") continue;
    try {
      const value: unknown = JSON.parse(line);
      mode = "jsonl";
      yield { line: n, value };
    } catch (err) {
      if (mode === "jsonl") {
        yield { line: n, error: { loc: [], msg: parseError(err), type: "json_invalid" } };
        continue;
      }
      mode = "document";
      docStart = n;
      doc = [raw];
    }
  }
  if (mode === "document") {
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
