/** Shared set-up of the span processor tests: real context propagation, a replay vendor and a collector. */
import { afterAll, beforeAll } from "vitest";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { StoredRun } from "../../src/store/index.js";
import { startCollector, type Running } from "./collector.js";
import { startReplayServer, type ReplayServer } from "./replay-server.js";

export const meta = (r: StoredRun) => (r.extra as { metadata: Record<string, unknown> }).metadata;
export const messages = (v: unknown) => (v as { messages: Record<string, unknown>[] }).messages;

/**
 * Registers beforeAll/afterAll for the calling test file: what provider.register()
 * would install (active spans follow async work), a replay server for the vendor,
 * and a collector requiring `apiKey`.
 */
export function otelEnvironment(apiKey: string): { readonly vendor: ReplayServer; readonly col: Running } {
  let vendor: ReplayServer | undefined;
  let col: Running | undefined;
  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    vendor = await startReplayServer();
    col = await startCollector({ apiKey });
  });
  afterAll(async () => {
    context.disable();
    await vendor?.close();
    await col?.close();
  });
  return {
    get vendor() {
      return vendor!;
    },
    get col() {
      return col!;
    },
  };
}
