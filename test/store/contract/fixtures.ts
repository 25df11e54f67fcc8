/**
 * What every part of the store conformance suite shares: a fresh store per
 * test from the implementation's `open`, ids, and run records. Nothing here
 * knows which database is behind the store.
 */
import { afterEach, beforeEach } from "vitest";
import type { Store, StoreOptions } from "../../../src/store/index.js";

/** Opens a fresh, empty store with these options (the implementation's own when none are given). */
export type OpenStore = (opts?: StoreOptions) => Promise<{ store: Store; cleanup(): Promise<void> }>;

/** A fresh, empty store for each test of the enclosing describe; the getter returns the current one. */
export function eachStore(open: OpenStore, opts?: StoreOptions): () => Store {
  let current: { store: Store; cleanup(): Promise<void> } | undefined;
  beforeEach(async () => {
    current = await open(opts);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error("no store open outside a test");
    return current.store;
  };
}

let counter = 0;
/** A fresh run id (a v7-shaped UUID); ids made later sort after earlier ones. */
export function newId(): string {
  counter++;
  return `0192b3c4-d5e6-7f00-8000-${counter.toString(16).padStart(12, "0")}`;
}

/** `YYYYMMDDTHHMMSSffffffZ` of a canonical time, for dotted orders. */
function stamp(time: string): string {
  return time.replace(/[-:]/g, "").replace(".", "");
}

export type Rec = Record<string, unknown> & { id: string };

/** A root run's post: a chain in project `default` at `start_time`. */
export function rootRun(o: Record<string, unknown> = {}): Rec {
  const id = (o.id as string | undefined) ?? newId();
  const start = (o.start_time as string | undefined) ?? "2026-11-22T10:15:00.123456Z";
  return {
    id,
    trace_id: id,
    dotted_order: `${stamp(start)}${id}`,
    name: "root",
    run_type: "chain",
    start_time: start,
    inputs: { question: "why?" },
    session_name: "default",
    ...o,
  };
}

/** A child run's post under `parent` (a post made by rootRun or childRun). */
export function childRun(parent: Rec, o: Record<string, unknown> = {}): Rec {
  const id = (o.id as string | undefined) ?? newId();
  const start = (o.start_time as string | undefined) ?? (parent.start_time as string);
  return {
    id,
    trace_id: parent.trace_id,
    parent_run_id: parent.id,
    dotted_order: `${parent.dotted_order as string}.${stamp(start)}${id}`,
    name: "child",
    run_type: "tool",
    start_time: start,
    session_name: parent.session_name,
    ...o,
  };
}

/** Native messages of one text part each. */
export function textMessages(...turns: [role: string, text: string][]): { messages: unknown[] } {
  return { messages: turns.map(([role, text]) => ({ role, content: [{ type: "text", text }] })) };
}

/** What the store adds to a run it derived nothing for (not an llm run, or native content). */
export const NOTHING_DERIVED = {
  detected_format: null,
  normalized_inputs: null,
  normalized_outputs: null,
  normalize_error: null,
  first_token_time: null,
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
