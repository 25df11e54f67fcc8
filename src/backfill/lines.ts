/**
 * Reading a log a line at a time, with the byte offset and number of every
 * line, so progress can be checkpointed and a rerun can start where the last
 * one stopped. Memory is one read buffer plus the current line, whatever the
 * file size; a line longer than `maxLineBytes` is skipped (its bytes are
 * counted and hashed, never held) and reported with its number, so one huge
 * line costs neither memory nor a crash. Reading is linear: a long line's
 * chunks are gathered in a list and joined once, not re-copied per chunk.
 *
 * `.gz` files are decompressed on the fly; their offsets count decompressed
 * bytes (gzip cannot be entered mid-stream, so a resumed `.gz` is read again
 * from the start and the lines before the offset are skipped unparsed).
 */
import { createReadStream, type ReadStream } from "node:fs";
import type { Hash } from "node:crypto";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { ConfigError } from "../errors.js";

/** Default longest line read (64 MiB): far above any real log record, far below V8's string limit (~512 MiB). */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface Line {
  /** 1-based line number in the (decompressed) file. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Byte offset just past the line's newline: where a resumed read starts. */
  end: number;
  /** The line without its newline; empty when `tooLong`. */
  text: string;
  /** The line was longer than `maxLineBytes`; `text` is empty and `end - offset` is its length. */
  tooLong?: true;
  /**
   * The file's last line, with no newline and not JSON: most likely one a writer is still
   * appending. The hash does not cover it, so a checkpoint can stand just before it.
   */
  unfinished?: true;
}

export interface ReadOptions {
  /** Start at this byte offset (the `end` of a line already done). */
  offset?: number;
  /** Number of the line that ends at `offset` (lines are counted on from it). */
  line?: number;
  /** Told the compressed (on-disk) bytes read so far, for progress. */
  onBytes?: (diskBytes: number) => void;
  /** Longest line read; longer ones are yielded `tooLong`. Default DEFAULT_MAX_LINE_BYTES. */
  maxLineBytes?: number;
  /** Updated with every byte of every yielded line (newline included), before the line is yielded. */
  hash?: Hash;
  /** Lines starting before this offset are yielded but not hashed (the hash already covers them). */
  hashFrom?: number;
}

export function isGzip(path: string): boolean {
  return path.endsWith(".gz");
}

/** Lines of a file on disk (gzip when it ends in .gz); read errors name the file. */
export async function* readLines(path: string, opts: ReadOptions = {}): AsyncGenerator<Line> {
  const gz = isGzip(path);
  const start = opts.offset ?? 0;
  const file: ReadStream = createReadStream(path, { start: gz ? 0 : start, highWaterMark: 1 << 20 });
  const source: Readable = gz ? file.pipe(createGunzip()) : file;
  file.on("error", (err) => source.destroy(err));
  let lastDisk = -1;
  const onChunk = opts.onBytes
    ? () => file.bytesRead !== lastDisk && opts.onBytes!((lastDisk = file.bytesRead) + (gz ? 0 : start))
    : undefined;
  let last = opts.line ?? 0;
  try {
    for await (const l of splitLines(source, { ...opts, offset: gz ? 0 : start, skipBefore: gz ? start : 0, onChunk })) {
      last = l.line;
      yield l;
    }
  } catch (err) {
    throw new ConfigError([
      {
        loc: ["files"],
        msg: `${path}: unreadable after line ${last} (${gz ? "not valid gzip: " : ""}${(err as Error).message})`,
        type: "file_unreadable",
      },
    ]);
  } finally {
    file.destroy();
    if (gz) source.destroy();
  }
}

/** Whether bytes are one JSON value (blank is not a record, so counts as whole). */
function isJson(parts: Buffer[], tail: Buffer): boolean {
  const text = (parts.length ? Buffer.concat([...parts, tail]) : tail).toString("utf8");
  if (!text.trim()) return true;
  try {
    JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return true;
  } catch {
    return false;
  }
}

interface SplitOptions extends ReadOptions {
  /** Offset of the stream's first byte. */
  offset?: number;
  /** Lines ending at or before this offset are not yielded (a resumed gzip file). */
  skipBefore?: number;
  onChunk?: () => void;
}

/** Lines of any byte stream (stdin, a file, a decompressor). */
export async function* splitLines(source: AsyncIterable<Buffer | string>, opts: SplitOptions = {}): AsyncGenerator<Line> {
  const max = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const skipBefore = opts.skipBefore ?? 0;
  const hash = opts.hash;
  const hashFrom = Math.max(skipBefore, opts.hashFrom ?? 0);
  let lineNo = opts.line ?? 0;
  let lineStart = opts.offset ?? 0; // offset of the current (unfinished) line
  let parts: Buffer[] = []; // the current line's bytes so far, when it is not too long
  let size = 0; // the current line's length so far
  let tooLong = false;

  const finish = (tail: Buffer, withNewline: boolean): Line | undefined => {
    const end = lineStart + size + tail.length;
    let line: Line | undefined;
    if (lineStart >= skipBefore) {
      lineNo++;
      const unfinished = !withNewline && !tooLong && size + tail.length <= max && !isJson(parts, tail);
      if (hash && lineStart >= hashFrom && !unfinished) {
        for (const p of parts) hash.update(p);
        hash.update(tail);
      }
      if (tooLong || size + tail.length > max) line = { line: lineNo, offset: lineStart, end, text: "", tooLong: true };
      else {
        const buf = parts.length ? Buffer.concat([...parts, tail]) : tail;
        let stop = buf.length - (withNewline ? 1 : 0);
        if (stop > 0 && buf[stop - 1] === 13) stop--; // CRLF
        // A UTF-8 byte-order mark (Windows editors, PowerShell) is no part of the first record.
        const from = lineStart === 0 && stop >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
        line = { line: lineNo, offset: lineStart, end, text: buf.toString("utf8", from, stop) };
      }
      if (unfinished) line.unfinished = true;
    }
    lineStart = end;
    parts = [];
    size = 0;
    tooLong = false;
    return line;
  };

  for await (const c of source) {
    opts.onChunk?.();
    const chunk = typeof c === "string" ? Buffer.from(c) : c;
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(10, from);
      if (nl < 0) break;
      const l = finish(chunk.subarray(from, nl + 1), true);
      from = nl + 1;
      if (l) yield l;
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      const counted = lineStart >= hashFrom; // lines the hash already covers are not hashed again
      if (!tooLong && size + rest.length > max) {
        // Over the limit: hash what is dropped (the checkpoint's file identity covers every byte), hold nothing.
        tooLong = true;
        if (hash && counted) for (const p of parts) hash.update(p);
        parts = [];
      }
      if (!tooLong) parts.push(rest);
      else if (hash && counted) hash.update(rest);
      size += rest.length;
    }
  }
  if (size > 0) {
    const l = finish(Buffer.alloc(0), false);
    if (l) yield l;
  }
}
