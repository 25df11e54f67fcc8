/**
 * What a traced generator yielded, kept for its run's outputs within one
 * run's size budget. A generator may yield without end (an event feed, a
 * file read in chunks): keeping every value it yields until it finishes
 * would hold, for the host, everything the host itself has long dropped.
 * So each value is copied safely when it is yielded, against what is left of
 * the budget, and once the budget is spent the rest are only counted. The
 * copy is the one the run would have made at the end anyway, taken at the
 * moment of the yield (what the generator yielded then, not what the object
 * became later).
 */
import { DEFAULT_MAX_BYTES, makeSafe } from "../run/safe.js";
import { serialize } from "../run/serialize.js";

export class YieldedValues {
  readonly #kept: unknown[] = [];
  #left: number;
  #cut = 0;

  constructor(maxBytes: number = DEFAULT_MAX_BYTES) {
    this.#left = maxBytes;
  }

  add(value: unknown): void {
    if (this.#left <= 0) {
      this.#cut++;
      return;
    }
    const { value: copy, bytes } = makeSafe(value, { maxBytes: this.#left });
    this.#kept.push(copy);
    // One more for the separating comma, so a generator of empty values still spends its budget.
    this.#left -= bytes + 1;
  }

  /** The run's outputs: what was kept (with a count of what was not), and what the generator returned. */
  outputs(returned?: unknown): Record<string, unknown> {
    const output = this.#cut ? [...this.#kept, `[Truncated ${this.#cut} more items]`] : this.#kept;
    return returned !== undefined ? { output, return: serialize(returned) } : { output };
  }
}
