/** Checks shared by the tests that take a store away under a real Client and bring it back. */
import { expect } from "vitest";
import type { Store } from "../../src/store/contract/store.js";

/** The collector says its store is well again, and holds each of `ids` once and complete, as the outage tests send them (`run N`, inputs {n: N}, outputs {done: true}). */
export async function expectEveryRunOnce(url: string, store: Store, project: string, ids: readonly string[]): Promise<void> {
  expect(((await (await fetch(`${url}/info`)).json()) as { store: { ok: boolean } }).store.ok).toBe(true);
  expect(await store.countRuns(project)).toBe(ids.length);
  for (const [i, id] of ids.entries()) {
    const run = await store.getRun(id);
    expect(run).toMatchObject({ name: `run ${i + 1}`, inputs: { n: i + 1 }, outputs: { done: true } });
    expect(run?.end_time).toBeTruthy();
  }
}
