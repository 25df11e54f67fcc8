/**
 * Long checks over one request (a huge array, a deep walk) give the event loop
 * a turn every SLICE units of work, so GET /info and other requests are
 * answered while a big body is being judged.
 */
const SLICE = 2000;

export class Slicer {
  private n = 0;

  /** Counts units of work; returns undefined, or (every SLICE units) a promise of a turn of the event loop. */
  tick(units = 1): Promise<void> | undefined {
    this.n += units;
    if (this.n < SLICE) return undefined;
    this.n = 0;
    return new Promise((r) => setImmediate(r));
  }
}
