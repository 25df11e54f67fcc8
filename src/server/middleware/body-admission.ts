/**
 * Large-body admission: a body that is (or turns out to be) large waits for one
 * of a few slots and for room in a byte budget, so concurrent big uploads cannot
 * add up to gigabytes. Each request holds one slot at most, until its answer is
 * sent (the parsed body lives that long).
 */
import { decodedStream } from "../body.js";
import { collectGarbage, GC_PART_CHARS } from "../gc.js";
import type { Middleware } from "./compose.js";

/**
 * Semaphore for large bodies: at most `size` at once, and a new one only while
 * the bytes already charged by the others leave room for its own charge in
 * `budget` (a body alone always runs, whatever its size). A body is charged
 * what is known of it: its declared length when admitted, then every decoded
 * byte past that (`grow`, never waiting, so no admitted body can stall).
 * Waiting is backpressure: the waiting request's stream is not read, so its
 * bytes stay in the kernel and the client's send buffer, not in this process.
 * Waiters are served in arrival order (a big one is not starved by small ones).
 */
export class LargeBodySlots {
  private used = 0;
  private charged = 0;
  private readonly queue: { bytes: number; resolve: () => void }[] = [];

  constructor(
    readonly size: number,
    readonly budget = Infinity,
  ) {}

  private fits(bytes: number): boolean {
    return this.used < this.size && (this.used === 0 || this.charged + bytes <= this.budget);
  }

  /** Resolves once a slot is held with `bytes` charged. */
  acquire(bytes = 0): Promise<void> {
    if (this.queue.length === 0 && this.fits(bytes)) {
      this.used++;
      this.charged += bytes;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push({ bytes, resolve }));
  }

  /** More bytes of a held body. */
  grow(bytes: number): void {
    this.charged += bytes;
  }

  /** Gives back a slot and everything it was charged (acquire's bytes plus its growth). */
  release(bytes = 0): void {
    this.used--;
    this.charged -= bytes;
    for (let next = this.queue[0]; next && this.fits(next.bytes); next = this.queue[0]) {
      this.queue.shift();
      this.used++;
      this.charged += next.bytes;
      next.resolve();
    }
  }

  get bytesCharged(): number {
    return this.charged;
  }

  get inUse(): number {
    return this.used;
  }

  get waiting(): number {
    return this.queue.length;
  }
}

export interface AdmissionOptions {
  slots: LargeBodySlots;
  /** Largest body, raw or decoded (413 past it). */
  maxBodyBytes: number;
  /** Decoded size from which a body needs a slot. */
  largeBodyBytes: number;
  /** The idle-socket timeout, restored once a slot is held. */
  idleSocketMs: number;
}

/** Sets `openBody` on the exchange: the decoded body, read only once this request holds a slot when it is large. */
export function bodyAdmission(o: AdmissionOptions): Middleware {
  const { slots } = o;
  return (x, next) => {
    const { req, res } = x;
    let admitted: Promise<void> | undefined;
    let held = false;
    let finished = false;
    // What this request is charged: its declared length (for gzip, a lower bound of the decoded size),
    // then its decoded bytes past that.
    const declared = Number(req.headers["content-length"]);
    const upFront = Number.isFinite(declared) && declared > 0 ? declared : 0;
    let charged = 0;
    res.once("close", () => {
      finished = true;
      // A large body's garbage is collected before the next one waiting is let in, so the two do not add up.
      if (held && charged >= GC_PART_CHARS) collectGarbage();
      if (held) slots.release(charged);
      held = false;
    });
    const admit = () => {
      if (admitted) return admitted;
      // Waiting for a slot is the server's doing, not an idle client: no idle-socket timeout meanwhile
      // (the request timeout still bounds the whole request).
      req.socket.setTimeout(0);
      return (admitted = slots.acquire(upFront).then(() => {
        req.socket.setTimeout(o.idleSocketMs);
        charged = upFront;
        if (finished) slots.release(charged);
        else held = true;
      }));
    };
    const decoded = (total: number) => {
      if (!held || total <= charged) return;
      slots.grow(total - charged);
      charged = total;
    };
    x.openBody = () => decodedStream(req, { maxBytes: o.maxBodyBytes, largeBytes: o.largeBodyBytes, admit, decoded });
    return next();
  };
}
