/**
 * Runs held encoded: the multipart texts of a queued run as UTF-8 bytes in a
 * slab shared with other runs, released once delivered so the slab can be
 * reused (ops.ts EncodedOp says why runs wait as bytes, not objects).
 */

/**
 * A run in multipart form, without the boundaries: what encodeMultipart writes
 * for it, as UTF-8 bytes held in a range of a shared slab (see
 * holdEncoded): the run's own part (`post.{id}`, its small
 * large fields inlined) from `ends[0]` to `ends[1]`, then each large field that
 * goes in a part of its own, `fields[i]`'s JSON from `ends[i + 1]` to `ends[i + 2]`.
 */
export interface EncodedRun {
  slab: Buffer;
  ends: number[];
  fields?: string[];
  /** The shared slab this run's bytes are in, while it holds them (see releaseEncoded). */
  shared?: SharedSlab;
}

/** The run object again, from its encoding: the part's fields and each large field's. */
export function decodeRun(e: EncodedRun): Record<string, unknown> {
  const { slab, ends, fields } = e;
  const run = JSON.parse(slab.toString("utf8", ends[0], ends[1])) as Record<string, unknown>;
  if (fields) for (let i = 0; i < fields.length; i++) run[fields[i]!] = JSON.parse(slab.toString("utf8", ends[i + 1], ends[i + 2]));
  return run;
}

/**
 * Slabs the runs held encoded are written into, one after another: making a
 * Buffer per run (its size counted, a view object, pool bookkeeping) costs
 * more than writing its bytes. A run holds its slab, offsets and its large
 * fields' names.
 *
 * Slabs are reused: each counts the runs written in it that are still held,
 * and once it is full and none is (every run delivered, or read back as an
 * object: releaseEncoded), it is kept for the next runs, up to SPARE_SLABS of
 * them. Why: a slab is memory outside V8's heap, freed only when a garbage
 * collection finds its owner dead. Slabs outlive a young collection or two
 * (until their batch is delivered), so they would be freed only by full
 * collections, and the outside memory adding up between those makes V8 mark
 * the heap again and again, promoting whatever the program has in hand.
 * A slab not released (its runs dropped, or the process gives up on them) is
 * left to the garbage collector.
 */
const SLAB_BYTES = 256 * 1024;
/** A run whose texts could take more than this goes in a slab of its own, exactly its size (not reused). */
const OWN_SLAB_BYTES = SLAB_BYTES / 8;
/** Free slabs kept for reuse at most: about what a batch of a thousand small runs fills. */
const SPARE_SLABS = 16;
/** A slab being filled or holding runs, and how many of its runs are held (see releaseEncoded). */
export interface SharedSlab {
  readonly buf: Buffer;
  held: number;
}
/** The slab being filled (made at the first run held encoded: importing the module allocates nothing). */
let slab: SharedSlab | undefined;
let slabUsed = 0;
const spare: Buffer[] = [];

/** The run's bytes are no longer needed (it was delivered, or read back as an object): its slab may be reused. Once per run. */
export function releaseEncoded(e: EncodedRun): void {
  const shared = e.shared;
  if (!shared) return;
  e.shared = undefined;
  if (--shared.held === 0 && shared !== slab) keepIfFree(shared);
}

/** Keep a full slab for reuse if none of its runs is held (and the spares are not all taken). */
function keepIfFree(s: SharedSlab): void {
  if (s.held === 0 && spare.length < SPARE_SLABS) spare.push(s.buf);
}

/** A run's texts (multipart.ts encodeRun) as UTF-8 bytes, in a shared slab when they are small. */
export function holdEncoded(texts: { part: string; own?: string[] }): EncodedRun {
  const { part, own } = texts;
  // At most three UTF-8 bytes per UTF-16 unit (a surrogate pair, two units, takes four).
  let most = part.length * 3;
  if (own) for (let i = 1; i < own.length; i += 2) most += own[i]!.length * 3;
  let buf: Buffer;
  let at: number;
  let shared: SharedSlab | undefined;
  if (most > OWN_SLAB_BYTES) {
    let exact = Buffer.byteLength(part);
    if (own) for (let i = 1; i < own.length; i += 2) exact += Buffer.byteLength(own[i]!);
    buf = Buffer.allocUnsafeSlow(exact);
    at = 0;
  } else {
    if (!slab || slabUsed + most > SLAB_BYTES) {
      // The full slab is reused at once if none of its runs is held any more.
      if (slab) keepIfFree(slab);
      slab = { buf: spare.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES), held: 0 };
      slabUsed = 0;
    }
    shared = slab;
    buf = slab.buf;
    at = slabUsed;
  }
  const ends = [at];
  at += buf.write(part, at, "utf8");
  ends.push(at);
  let fields: string[] | undefined;
  if (own) {
    fields = [];
    for (let i = 0; i < own.length; i += 2) {
      fields.push(own[i]!);
      at += buf.write(own[i + 1]!, at, "utf8");
      ends.push(at);
    }
  }
  if (shared) {
    slabUsed = at;
    shared.held++;
  }
  return { slab: buf, ends, fields, shared };
}
