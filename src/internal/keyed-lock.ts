/**
 * Mutual exclusion per key inside one process: `run(key, fn)` starts fn once
 * every earlier fn of the same key has settled. Keys with nothing queued hold
 * no memory.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Whether some fn of `key` is running or queued now. */
  held(key: string): boolean {
    return this.tails.has(key);
  }

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const result = before.then(fn, fn);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
