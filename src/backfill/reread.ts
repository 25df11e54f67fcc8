/**
 * Reading a file from its start again, for the readers that need all of it each time it has
 * anything new (an OTLP export gathers spans by trace, a join's request file feeds its index).
 * Lines before the checkpoint are yielded but not hashed again: the hash carried over from the
 * earlier run already covers them.
 */
import { readLines, type Line } from "./lines.js";
import type { ReadContext } from "./reader.js";

export function linesFromStart(ctx: ReadContext): AsyncGenerator<Line> {
  return readLines(ctx.path, { hash: ctx.hash, hashFrom: ctx.from.offset, maxLineBytes: ctx.maxLineBytes, onBytes: ctx.onBytes });
}
