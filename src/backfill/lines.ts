/**
 * Reading a log file a line at a time, with the byte offset and number of
 * every line, so progress can be checkpointed and a rerun can start where the
 * last one stopped. Memory is one read buffer plus the current line, whatever
 * the file size. `.gz` files are decompressed on the fly; their offsets count
 * decompressed bytes (gzip cannot be entered mid-stream, so a resumed `.gz`
 * is read again from the start and the lines before the offset are skipped
 * unparsed).
 */
import { createReadStream, type ReadStream } from "node:fs";
import { createGunzip } from "node:zlib";

export interface Line {
  /** 1-based line number in the (decompressed) file. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Byte offset just past the line's newline: where a resumed read starts. */
  end: number;
  text: string;
}

export interface ReadOptions {
  /** Start at this byte offset (the `end` of a line already done). */
  offset?: number;
  /** Number of the line that ends at `offset` (lines are counted on from it). */
  line?: number;
  /** Told the compressed (on-disk) bytes read so far, for progress. */
  onBytes?: (diskBytes: number) => void;
}

export function isGzip(path: string): boolean {
  return path.endsWith(".gz");
}

export async function* readLines(path: string, opts: ReadOptions = {}): AsyncGenerator<Line> {
  const gz = isGzip(path);
  const start = opts.offset ?? 0;
  const file: ReadStream = createReadStream(path, { start: gz ? 0 : start, highWaterMark: 1 << 20 });
  const source = gz ? file.pipe(createGunzip()) : file;
  file.on("error", (err) => source.destroy(err));
  let pos = gz ? 0 : start; // decompressed offset of `pending`'s first byte
  let lineNo = opts.line ?? 0;
  let pending: Buffer | undefined;
  let lastDisk = -1;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      if (opts.onBytes && file.bytesRead !== lastDisk) opts.onBytes((lastDisk = file.bytesRead) + (gz ? 0 : start));
      let buf = pending ? Buffer.concat([pending, chunk]) : chunk;
      let from = 0;
      for (;;) {
        const nl = buf.indexOf(10, from);
        if (nl < 0) break;
        const lineStart = pos + from;
        const lineEnd = pos + nl + 1;
        if (lineEnd > start) {
          lineNo++;
          let stop = nl;
          if (stop > from && buf[stop - 1] === 13) stop--; // CRLF
          yield { line: lineNo, offset: lineStart, end: lineEnd, text: buf.toString("utf8", from, stop) };
        }
        from = nl + 1;
      }
      pos += from;
      pending = from < buf.length ? buf.subarray(from) : undefined;
      buf = Buffer.alloc(0);
    }
    if (pending && pending.length > 0 && pos + pending.length > start) {
      lineNo++;
      yield { line: lineNo, offset: pos, end: pos + pending.length, text: pending.toString("utf8") };
    }
  } finally {
    file.destroy();
    if (gz) source.destroy();
  }
}
