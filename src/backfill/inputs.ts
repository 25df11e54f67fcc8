/**
 * The input files of a backfill, checked up front: each exists and is a
 * regular file, its kind is detected from its first parseable records (or
 * --format), and request files with their results file beside them are
 * marked to be read only for the join.
 */
import { statSync } from "node:fs";
import { ConfigError } from "../errors.js";
import type { FileKind, FormatName } from "./formats.js";
import { readLines } from "./lines.js";
import { detectKind, READER } from "./readers.js";

export interface InputFile {
  path: string;
  kind: FileKind;
  size: number;
  mtimeMs: number;
  /** A request file read only to join with a results file. */
  joinOnly: boolean;
}

const DETECT_LINES = 50;

function fileError(index: number, msg: string, type: string): ConfigError {
  return new ConfigError([{ loc: ["files", index], msg, type }]);
}

async function detectFile(
  path: string,
  format: FormatName | undefined,
  index: number,
  maxLineBytes: number | undefined,
): Promise<FileKind> {
  let seen = 0;
  let firstError: string | undefined;
  try {
    for await (const l of readLines(path, { maxLineBytes })) {
      if (l.tooLong || !l.text.trim()) continue;
      if (++seen > DETECT_LINES) break;
      let v: unknown;
      try {
        v = JSON.parse(l.text);
      } catch (err) {
        firstError ??= `line ${l.line} is not JSON (${(err as Error).message})`;
        continue;
      }
      const kind = detectKind(v, format ?? "auto");
      if (kind) return kind;
      firstError ??= `line ${l.line} is not a record of ${format && format !== "auto" ? `the ${format} format` : "any known format"}`;
    }
  } catch (err) {
    if (err instanceof ConfigError) throw fileError(index, err.issues[0]!.msg, "file_unreadable");
    throw err;
  }
  throw fileError(
    index,
    `${path}: cannot tell its format (${firstError ?? "the file is empty"}); formats: openai-batch, anthropic-batch, generic, runs, otlp-json; pass --format`,
    "unknown_format",
  );
}

export async function openInputs(
  files: readonly string[],
  format: FormatName | undefined,
  maxLineBytes: number | undefined,
): Promise<InputFile[]> {
  if (files.length === 0) throw new ConfigError([{ loc: ["files"], msg: "no input files", type: "missing" }]);
  const inputs: InputFile[] = [];
  for (const [i, path] of files.entries()) {
    let st;
    try {
      st = statSync(path);
    } catch {
      throw fileError(i, `${path}: no such file`, "file_not_found");
    }
    if (st.isDirectory())
      throw fileError(i, `${path} is a directory; give the log files in it (e.g. ${path.replace(/\/+$/, "")}/*.jsonl)`, "is_a_directory");
    if (!st.isFile()) throw fileError(i, `${path} is not a regular file`, "not_a_file");
    inputs.push({ path, kind: await detectFile(path, format, i, maxLineBytes), size: st.size, mtimeMs: st.mtimeMs, joinOnly: false });
  }
  for (const f of inputs) {
    const results = READER[f.kind].joinedTo;
    f.joinOnly = results !== undefined && inputs.some((g) => g.kind === results);
  }
  // Request files first: the join index must be whole before any results line looks into it.
  return [...inputs.filter((f) => f.joinOnly), ...inputs.filter((f) => !f.joinOnly)];
}
