/**
 * RunTree: one run in progress, and how its children are made. It builds the
 * Run record of DESIGN.md: uuidv7 id, trace_id = the root's id, dotted_order
 * from the root down, microsecond times, events, tags, extra.metadata,
 * session_name.
 */
import type { Run, RunEvent } from "./schema.js";
import { dottedSegment, isoMicros, nowMicros, uuidv7 } from "./ids.js";

export interface RunTreeInit {
  name: string;
  run_type?: string;
  inputs?: Record<string, unknown>;
  tags?: string[];
  metadata?: Record<string, unknown>;
  session_name?: string;
  /** Start time in microseconds since the epoch; now by default. */
  startMicros?: number;
  id?: string;
}

export class RunTree {
  readonly id: string;
  readonly trace_id: string;
  readonly parent_run_id?: string;
  readonly dotted_order: string;
  readonly startMicros: number;
  name: string;
  run_type: string;
  inputs: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  error?: string;
  events: RunEvent[] = [];
  tags: string[];
  metadata: Record<string, unknown>;
  session_name?: string;
  endMicros?: number;

  constructor(init: RunTreeInit, parent?: RunTree) {
    this.startMicros = init.startMicros ?? nowMicros();
    this.id = init.id ?? uuidv7(this.startMicros / 1000);
    this.name = init.name;
    this.run_type = init.run_type ?? "chain";
    this.inputs = init.inputs ?? {};
    this.tags = init.tags ?? [];
    this.metadata = init.metadata ?? {};
    this.session_name = init.session_name ?? parent?.session_name;
    const seg = dottedSegment(this.startMicros, this.id);
    if (parent) {
      this.trace_id = parent.trace_id;
      this.parent_run_id = parent.id;
      this.dotted_order = `${parent.dotted_order}.${seg}`;
    } else {
      this.trace_id = this.id;
      this.dotted_order = seg;
    }
  }

  createChild(init: RunTreeInit): RunTree {
    return new RunTree(init, this);
  }

  addEvent(name: string, kwargs?: Record<string, unknown>, micros: number = nowMicros()): RunEvent {
    const e: RunEvent = kwargs ? { name, time: isoMicros(micros), kwargs } : { name, time: isoMicros(micros) };
    this.events.push(e);
    return e;
  }

  end(outputs?: Record<string, unknown>, error?: string, micros: number = nowMicros()): void {
    if (this.endMicros !== undefined) return;
    this.endMicros = micros;
    if (outputs !== undefined) this.outputs = outputs;
    if (error !== undefined) this.error = error;
  }

  get ended(): boolean {
    return this.endMicros !== undefined;
  }

  /** The record as created (a post). */
  toRun(): Run {
    const run: Run = {
      id: this.id,
      trace_id: this.trace_id,
      dotted_order: this.dotted_order,
      name: this.name,
      run_type: this.run_type,
      start_time: isoMicros(this.startMicros),
      inputs: this.inputs,
      // Copies: a queued record must not change as the run goes on.
      tags: [...this.tags],
      extra: { metadata: { ...this.metadata } },
      events: [...this.events],
    };
    if (this.parent_run_id) run.parent_run_id = this.parent_run_id;
    if (this.session_name) run.session_name = this.session_name;
    if (this.endMicros !== undefined) run.end_time = isoMicros(this.endMicros);
    if (this.outputs !== undefined) run.outputs = this.outputs;
    if (this.error !== undefined) run.error = this.error;
    return run;
  }

  /** The update sent when the run ends (a patch). */
  toPatch(): Omit<Run, "id"> {
    const { id: _id, ...rest } = this.toRun();
    return rest;
  }
}
