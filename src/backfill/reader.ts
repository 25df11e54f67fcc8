/**
 * LogReader: every input kind behind one interface, how to recognise a file
 * by its first record, and how to read it into items the pipeline handles
 * the same way whatever the kind (a run to send, a bad line to dead-letter, a
 * position up to which everything has been yielded). The readers themselves
 * are registered in readers.ts.
 */
import type { Hash } from "node:crypto";
import type { Run } from "../run/schema.js";
import type { FileKind, FormatName } from "./formats.js";
import type { RequestIndex } from "./join.js";
import type { Line } from "./lines.js";
import type { Owns } from "./shard.js";

type Obj = Record<string, unknown>;

export interface ReadContext {
  path: string;
  /** Where the last run stopped: every line ending at or before `offset` is done. */
  from: { offset: number; line: number };
  /** SHA-256 state over the file's bytes up to `from.offset`; readers continue it over every later byte. */
  hash: Hash;
  maxLineBytes?: number;
  /** Compressed bytes read so far, for progress. */
  onBytes?: (diskBytes: number) => void;
  owns: Owns;
  project?: string;
  /** The file's mtime: the time of records that carry none. */
  mtimeMs: number;
  /** Batch requests by custom_id: results files look theirs up, request files read only to join fill it. */
  requests: RequestIndex;
  /** A request file read only to fill `requests` (its results file was given too). */
  joinOnly: boolean;
}

export interface BadLine {
  line: number;
  raw: string;
  error: unknown;
}

/** What a reader yields. A line-format reader yields one item per line, with all four fields it has. */
export interface Item {
  /** A line read for the first time (counted: lines, and records or other shards' records). */
  line?: Line;
  /** For `line`: whether this shard owns it. */
  own?: boolean;
  run?: Run;
  bad?: BadLine;
  /** Everything up to here has been yielded: progress may be made durable at this point. */
  done?: { offset: number; line: number };
}

export interface LogReader {
  readonly kind: FileKind;
  /** The --format name that selects this reader. */
  readonly format: Exclude<FormatName, "auto">;
  /** Whether one parsed record looks like this kind (READERS is checked in order). */
  matches(v: Obj): boolean;
  /** Request files: the results-file kind they are joined to. */
  readonly joinedTo?: FileKind;
  read(ctx: ReadContext): AsyncIterable<Item>;
}
