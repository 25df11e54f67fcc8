/**
 * What the client keeps of a run before it leaves the process: sampling
 * (whole traces kept or dropped) and masking (hidden inputs / outputs, and a
 * function over every string). Both apply in the Client, so every producer
 * (wrappers, traceable, the span processor, backfill) gets them.
 */
import { createHash } from "node:crypto";
import { isObj, type Obj } from "../internal/obj.js";
import type { Loc } from "../internal/types.js";

export type Hide = boolean | ((value: Obj) => Obj);

export interface PrivacyOptions {
  /**
   * Fraction of traces kept, 0 to 1 (default `TRACEPIPE_SAMPLING_RATE`, else 1). The decision
   * is a function of the trace id, so every run of a trace, in any process, gets the same one.
   */
  samplingRate?: number;
  /** Replace every run's inputs with `{}` (true) or with what the function returns. */
  hideInputs?: Hide;
  /** The same for outputs. */
  hideOutputs?: Hide;
  /**
   * Called for every string the run carries in inputs, outputs, events, error and
   * extra (metadata included); what it returns is sent instead. `path` is where the
   * string sits, e.g. `["inputs", "messages", 0, "content", 0, "text"]`.
   */
  mask?: (value: string, path: Readonly<Loc>) => string;
}

/** Fields of a run that identify and place it: never hidden, masked or rewritten. */
const STRUCTURAL = new Set([
  "id",
  "trace_id",
  "parent_run_id",
  "dotted_order",
  "name",
  "run_type",
  "start_time",
  "end_time",
  "session_name",
  "tags",
]);

/** Where a trace id falls in [0, 1): the first 52 bits of its SHA-256. */
export function traceFraction(traceId: string): number {
  const h = createHash("sha256").update(traceId).digest();
  return (h.readUInt32BE(0) * 2 ** 20 + (h.readUInt32BE(4) >>> 12)) / 2 ** 52;
}

/**
 * Decides per trace. Posts carry their trace id; a patch usually does not, so the
 * ids of dropped runs are remembered (at most `memory` of them, oldest forgotten
 * first) until their last update, and a patch for one of them is dropped too.
 */
export class Sampler {
  private readonly dropped = new Set<string>();

  constructor(
    readonly rate: number,
    private readonly memory = 100_000,
  ) {}

  /** Whether a run (post or patch) is sent. */
  keep(run: Obj): boolean {
    if (this.rate >= 1) return true;
    const id = typeof run.id === "string" ? run.id : undefined;
    const traceId = typeof run.trace_id === "string" ? run.trace_id : undefined;
    let keep: boolean;
    if (traceId !== undefined) keep = this.rate > 0 && traceFraction(traceId) < this.rate;
    else keep = !(id !== undefined && this.dropped.has(id));
    if (!keep && id !== undefined) {
      if (run.end_time !== undefined && run.end_time !== null) this.dropped.delete(id);
      else this.remember(id);
    }
    return keep;
  }

  private remember(id: string): void {
    if (this.dropped.has(id)) return;
    if (this.dropped.size >= this.memory) this.dropped.delete(this.dropped.values().next().value!);
    this.dropped.add(id);
  }
}

function maskDeep(v: unknown, path: Loc, mask: NonNullable<PrivacyOptions["mask"]>): unknown {
  if (typeof v === "string") return mask(v, path);
  if (Array.isArray(v)) return v.map((x, i) => maskDeep(x, [...path, i], mask));
  if (isObj(v)) {
    const out: Obj = {};
    for (const k in v) out[k] = maskDeep(v[k], [...path, k], mask);
    return out;
  }
  return v;
}

function hide(value: unknown, how: Hide | undefined): unknown {
  if (how === undefined || how === false || value === undefined || value === null) return value;
  if (how === true) return {};
  return how(isObj(value) ? value : { value });
}

/**
 * The run as it may leave the process: a new object (the caller's is not changed).
 * A failing user function hides the field rather than send what it should have masked.
 */
export function applyPrivacy(run: Obj, o: PrivacyOptions): Obj {
  if (o.hideInputs === undefined && o.hideOutputs === undefined && o.mask === undefined) return run;
  const out: Obj = { ...run };
  for (const [field, how] of [
    ["inputs", o.hideInputs],
    ["outputs", o.hideOutputs],
  ] as const) {
    if (!(field in out)) continue;
    try {
      out[field] = hide(out[field], how);
    } catch {
      out[field] = { hidden: "the hide function failed" };
    }
  }
  if (o.mask) {
    for (const k in out) {
      if (STRUCTURAL.has(k)) continue;
      try {
        out[k] = maskDeep(out[k], [k], o.mask);
      } catch {
        out[k] = typeof out[k] === "string" ? "[masking failed]" : { masked: "the mask function failed" };
      }
    }
  }
  return out;
}

/** TRACEPIPE_SAMPLING_RATE as a number in [0, 1], or undefined when unset; anything else is an error naming the variable. */
export function samplingRateFrom(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new RangeError(`TRACEPIPE_SAMPLING_RATE must be a number from 0 to 1, got ${JSON.stringify(raw)}`);
  return n;
}
