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

/** Characters of a text's head and tail in its fingerprint, and how many more are sampled from its middle. */
const FP_ENDS = 16;
const FP_SAMPLES = 8;

/**
 * A text's fingerprint: FNV-1a over its length, head, tail and a few
 * characters spread over its middle, so ~40 characters read however long the
 * text. Equal texts have equal fingerprints; different texts rarely do. Used
 * where a collision costs only a miss or an early keep, never a wrong count.
 */
export function fingerprint(t: string): number {
  const n = t.length;
  const head = Math.min(n, FP_ENDS);
  const tail = Math.max(head, n - FP_ENDS);
  let h = PieceMemo.hash(t, tail, n, PieceMemo.hash(t, 0, head, Math.imul(0x811c9dc5 ^ n, 0x01000193)));
  const step = Math.floor((tail - head) / (FP_SAMPLES + 1));
  if (step > 0) for (let i = head + step; i < tail; i += step) h = Math.imul(h ^ t.charCodeAt(i), 0x01000193);
  return h;
}

/** A fingerprint's slot in a direct-mapped table of `slots` (a power of two) entries. */
export const slotOf = (fp: number, slots: number) => (fp ^ (fp >>> 14)) & (slots - 1);

/**
 * Counts of texts in two generations: new ones go to the young Map; when it
 * is full (`limit` entries, or characters with `byChars`) it becomes the old
 * one and the oldest is dropped; a hit in the old one moves the text to the
 * young one. So a text in use stays, and what has not been asked for in two
 * generations goes, at a constant cost per lookup.
 *
 * In front of the Maps (when `frontSlots` is given), a direct-mapped table
 * by fingerprint holds the last text found or kept in each slot, with its
 * count. Why: the texts looked up are new strings every time (each span's
 * JSON.parse makes them), and a Map lookup hashes the whole of a new string,
 * where a fingerprint reads a few dozen characters and `===` compares the
 * rest natively. In a span's texts the hits (the system prompt, the tool
 * calls and results) are most of the texts.
 *
 * A front entry is trusted only while its text is in the young Map (its
 * generation is the current one), as a lookup through the Maps would leave
 * it; an older one goes the long way, which moves its text to the young Map
 * and refreshes the entry. The rotation that drops the old Map clears the
 * entries of its texts, so the front holds no text the Maps do not.
 */
export class TextCountCache {
  private young = new Map<string, number>();
  private old = new Map<string, number>();
  private youngSize = 0;
  private readonly front: (string | undefined)[];
  private readonly frontCounts: Int32Array;
  private readonly frontGenerations: Int32Array;
  private generation = 1;

  constructor(
    private readonly limit: number,
    private readonly byChars = false,
    /** Slots of the front (a power of two), or 0 for none. */
    private readonly frontSlots = 0,
  ) {
    this.front = new Array<string | undefined>(frontSlots);
    this.frontCounts = new Int32Array(frontSlots);
    this.frontGenerations = new Int32Array(frontSlots);
  }

  /** The count kept for `s` (`fp`: its fingerprint, when the caller has it; unused without a front). */
  get(s: string, fp = this.frontSlots ? fingerprint(s) : 0): number | undefined {
    const slot = slotOf(fp, this.frontSlots);
    // `===` compares the characters natively, and at once when the lengths differ: no hash of the whole text.
    if (this.frontSlots && this.front[slot] === s && this.frontGenerations[slot] === this.generation) return this.frontCounts[slot];
    let n = this.young.get(s);
    if (n === undefined && this.old.size > 0) {
      n = this.old.get(s);
      if (n === undefined) return undefined;
      this.old.delete(s);
      this.add(s, n);
    }
    if (n !== undefined && this.frontSlots) this.remember(slot, s, n);
    return n;
  }

  /** Keep `s`'s count (`fp`: its fingerprint, when the caller has it; unused without a front). */
  set(s: string, n: number, fp = this.frontSlots ? fingerprint(s) : 0): void {
    this.add(s, n);
    if (this.frontSlots) this.remember(slotOf(fp, this.frontSlots), s, n);
  }

  private add(s: string, n: number): void {
    const size = this.byChars ? s.length : 1;
    if (this.youngSize + size > this.limit && this.young.size > 0) {
      this.old = this.young;
      this.young = new Map();
      this.youngSize = 0;
      this.rotated();
    }
    this.young.set(s, n);
    this.youngSize += size;
  }

  private remember(slot: number, s: string, n: number): void {
    this.front[slot] = s;
    this.frontCounts[slot] = n;
    this.frontGenerations[slot] = this.generation;
  }

  /** The young Map became the old one and the old one was dropped: so are the front's entries for its texts. */
  private rotated(): void {
    const dropped = this.generation - 1;
    this.generation++;
    for (let i = 0; i < this.frontSlots; i++) if (this.frontGenerations[i]! <= dropped) this.front[i] = undefined;
  }
}

/**
 * Segment counts (segments.ts), at most `maxEntries` per generation. The
 * segments an app keeps repeating survive the many that occur once (the part
 * of each prompt that differs), which emptying the whole table when full
 * would throw out with them.
 */
export class SegmentTable extends TextCountCache {
  constructor(maxEntries: number) {
    // No front: segments are short, and a fingerprint and a comparison cost as much as the Map's hash of one.
    super(maxEntries, false, 0);
  }
}
