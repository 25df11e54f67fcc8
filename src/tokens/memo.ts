/**
 * The piece memo (see count.ts): token counts of short pieces already seen,
 * looked up by a range of the text being counted rather than by a string.
 *
 * Why not a Map<string, number>: a lookup there needs the piece as a string
 * of its own (a slice: an allocation) and V8 hashes each new string in its
 * runtime; with ~1 piece per 6 characters that was the largest cost of
 * counting a message once the pieces were found. Here the hash is computed
 * over the character codes in place and a hit is confirmed by comparing them
 * with the stored piece, so a hit allocates nothing. Open addressing with
 * linear probing, at most half full; it grows by doubling up to `maxEntries`,
 * and is emptied when that many pieces are stored (as the Map was).
 */
export class PieceMemo {
  private keys: (string | undefined)[];
  /**
   * Per slot, its piece's hash then its count, side by side: a probe reads
   * one place in typed memory and touches the stored piece (a string
   * elsewhere on the heap) only when the hash matches. A count is at least 1,
   * so 0 marks an empty slot. (Reading the key first cost a cache miss per
   * probe, and in a program doing other work the memo's probes were a good
   * part of what estimation cost.)
   */
  private slots: Int32Array;
  private mask: number;
  size = 0;

  constructor(
    private readonly maxEntries: number,
    initialSlots = 1024,
  ) {
    this.keys = new Array<string | undefined>(initialSlots);
    this.slots = new Int32Array(initialSlots * 2);
    this.mask = initialSlots - 1;
  }

  /** FNV-1a over text[start..end), continuing from `h` (the offset basis by default). */
  static hash(text: string, start: number, end: number, h = 0x811c9dc5 | 0): number {
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return h;
  }

  /** The count stored for text[start..end) (whose hash is h), or -1. */
  get(text: string, start: number, end: number, h: number): number {
    const len = end - start;
    const mask = this.mask;
    const slots = this.slots;
    for (let slot = (h ^ (h >>> 16)) & mask; ; slot = (slot + 1) & mask) {
      const count = slots[2 * slot + 1]!;
      if (count === 0) return -1;
      if (slots[2 * slot] === h) {
        const key = this.keys[slot]!;
        if (key.length === len && same(key, text, start, len)) return count;
      }
    }
  }

  /** Store text[start..end)'s count (the piece is not in the memo). A count below 1 (an empty piece) is not stored. */
  set(text: string, start: number, end: number, h: number, count: number): void {
    if (count < 1) return;
    if (this.size >= this.maxEntries) this.clear();
    if ((this.size + 1) * 2 > this.keys.length) this.grow();
    this.put(text.slice(start, end), h, count);
    this.size++;
  }

  clear(): void {
    this.keys.fill(undefined);
    this.slots.fill(0);
    this.size = 0;
  }

  private put(key: string, h: number, count: number): void {
    const mask = this.mask;
    let slot = (h ^ (h >>> 16)) & mask;
    while (this.slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
    this.keys[slot] = key;
    this.slots[2 * slot] = h;
    this.slots[2 * slot + 1] = count;
  }

  private grow(): void {
    const { keys, slots } = this;
    const n = keys.length * 2;
    this.keys = new Array<string | undefined>(n);
    this.slots = new Int32Array(n * 2);
    this.mask = n - 1;
    for (let i = 0; i < keys.length; i++) if (slots[2 * i + 1] !== 0) this.put(keys[i]!, slots[2 * i]!, slots[2 * i + 1]!);
  }
}

function same(key: string, text: string, start: number, len: number): boolean {
  for (let i = 0; i < len; i++) if (key.charCodeAt(i) !== text.charCodeAt(start + i)) return false;
  return true;
}

/**
 * Segment counts in two generations: when the newer one is full, it becomes
 * the older and the oldest is dropped; a hit in the older moves the segment
 * to the newer. The segments an app keeps repeating survive the many that
 * occur once (the part of each prompt that differs), which emptying the whole
 * table when full would throw out with them.
 */
export class SegmentTable {
  private young = new Map<string, number>();
  private old = new Map<string, number>();
  constructor(private readonly maxEntries: number) {}

  get(s: string): number | undefined {
    const k = this.young.get(s);
    if (k !== undefined || this.old.size === 0) return k;
    const o = this.old.get(s);
    if (o !== undefined) this.set(s, o);
    return o;
  }

  set(s: string, k: number): void {
    if (this.young.size >= this.maxEntries) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(s, k);
  }
}
