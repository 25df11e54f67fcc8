import { afterEach } from "vitest";
import { startCollector, type Running } from "./collector.js";

/**
 * Registers an afterEach that undoes, newest first, what a test pushed onto
 * `cleanup`; `collector()` starts a collector that is closed that way.
 */
export function cleanupAfterEach(): { cleanup: (() => unknown)[]; collector: () => Promise<Running> } {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()!();
  });
  return {
    cleanup,
    async collector() {
      const c = await startCollector();
      cleanup.push(() => c.close());
      return c;
    },
  };
}
