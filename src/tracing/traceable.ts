/**
 * traceable(fn, opts): the same function, recorded as a run. Works for sync and
 * async functions, generators and async generators. Nesting follows
 * AsyncLocalStorage, so parallel children find the right parent. Errors are
 * recorded on the run and rethrown unchanged.
 *
 *   const answer = traceable(async (q: string) => llm(q), { name: "answer", run_type: "chain" });
 */
import type { RunWriter } from "../run/writer.js";
import { RunTree } from "../run/tree.js";
import { isoMicros } from "../run/ids.js";
import { serialize, serializeRecord } from "../run/serialize.js";
import { runContext, tracingEnabled, tracingOn } from "./context.js";
import { getDefaultClient } from "../ingest/default.js";
import { errorText } from "../internal/quietly.js";
import { watchThenable } from "./thenable.js";
import { YieldedValues } from "./yielded.js";

export interface TraceableOptions {
  name?: string;
  run_type?: string;
  metadata?: Record<string, unknown>;
  tags?: string[];
  /** Where runs go; the default client otherwise. */
  client?: RunWriter;
  /** Project (session_name); the client's project otherwise. */
  project?: string;
  /** The `langsmith` SDK's name for `project`. */
  project_name?: string;
  /** Rewrite (e.g. redact) the inputs before they are recorded. */
  processInputs?: (inputs: Record<string, unknown>) => Record<string, unknown>;
  /** Rewrite (e.g. redact) the outputs before they are recorded. */
  processOutputs?: (outputs: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * Arguments to inputs, the way the `langsmith` SDK records them, so a team can
 * switch by changing an import and keep its run shapes: one plain object is
 * the inputs; one other value is `{input}`; several are `{args}`; a first
 * argument of null is `{inputs: null}` and of undefined `{}`.
 */
function inputsOf(args: unknown[]): Record<string, unknown> {
  const first = args[0];
  if (first === null) return { inputs: null };
  if (first === undefined) return {};
  if (args.length > 1) return { args: serialize(args) };
  if (typeof first === "object" && !Array.isArray(first)) {
    const proto = Object.getPrototypeOf(first);
    if ((proto === Object.prototype || proto === null) && !(Symbol.toStringTag in first)) return serializeRecord(first);
  }
  return { input: serialize(first) };
}

/**
 * What a run records of a value the host handed over or got back, when it cannot be read. A value that cannot be
 * read (a revoked proxy, a proxy or getter that throws) is named in the run, never thrown:
 * the host's call goes on as it would untraced.
 */
function unreadable(what: string, err: unknown): Record<string, unknown> {
  return { error: `could not read the ${what}: ${errorText(err)}` };
}

/** A result as a run's outputs (see unreadable). */
function outputsOf(value: unknown): Record<string, unknown> {
  try {
    return serializeRecord(value);
  } catch (err) {
    return unreadable("outputs", err);
  }
}

/** A generator's outputs: what it yielded, and what it returned (see unreadable). */
function yieldedOutputs(yielded: YieldedValues, returned?: unknown): Record<string, unknown> {
  try {
    return yielded.outputs(returned);
  } catch (err) {
    return unreadable("outputs", err);
  }
}

type Shape = "thenable" | "asyncIterator" | "iterator" | "value";

/** How a result is followed. One whose properties cannot be read (a proxy that throws) is a plain value. */
function shapeOf(result: unknown): Shape {
  try {
    if (isThenable(result)) return "thenable";
    if (isAsyncIterator(result)) return "asyncIterator";
    if (isIterator(result) && !Array.isArray(result) && typeof result !== "string") return "iterator";
  } catch {
    // as the doc says
  }
  return "value";
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
}

function isIterator(v: unknown): v is Iterator<unknown> & Iterable<unknown> {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { next?: unknown }).next === "function" &&
    typeof (v as Record<symbol, unknown>)[Symbol.iterator] === "function"
  );
}

function isAsyncIterator(v: unknown): v is AsyncIterator<unknown> & AsyncIterable<unknown> {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { next?: unknown }).next === "function" &&
    typeof (v as Record<symbol, unknown>)[Symbol.asyncIterator] === "function"
  );
}

let writerWarned = false;

/**
 * A writer is user-replaceable (`client` option): one that throws loses its run,
 * never the traced call. Said once per process, so a broken writer is noticed.
 */
function guarded(write: () => void): void {
  try {
    write();
  } catch (err) {
    if (writerWarned) return;
    writerWarned = true;
    process.emitWarning(
      `tracepipe: a run could not be handed to its writer (${errorText(err)}); the traced call went on untraced`,
      "TracepipeWarning",
    );
  }
}

let clientWarned = false;

/**
 * The default client, or undefined when it cannot be made (a bad TRACEPIPE_* setting, whose
 * ConfigError names it): the call then goes on untraced, as a wrapped SDK call does, and
 * the error is said once per process rather than thrown into every traced call.
 */
function defaultWriter(): RunWriter | undefined {
  try {
    return getDefaultClient();
  } catch (err) {
    if (!clientWarned) {
      clientWarned = true;
      process.emitWarning(
        `tracepipe: the default client could not be made (${errorText(err)}); traced calls go on untraced`,
        "TracepipeWarning",
      );
    }
    return undefined;
  }
}

/** Start a run under the current one (or as a root), post it, and hand back how to finish it. */
export function startRun(
  writer: RunWriter,
  init: {
    name: string;
    run_type: string;
    inputs: Record<string, unknown>;
    metadata?: Record<string, unknown>;
    tags?: string[];
    project?: string;
    /** Where and when the run began, when it is built after the fact (a deferred build): its parent and start time. */
    began?: { parent: RunTree | undefined; startMicros: number };
    /** The run's values are the producer's own copies (RunWriter's `owned`): the writer may check rather than copy them. */
    owned?: boolean;
    /**
     * The run has ended already and its end is built next (a deferred build that ran after its call
     * returned): the create is handed over by finish(), whole, instead of a create and then an update.
     * `create()` hands over the create as it stands, if finish() never comes.
     */
    createAtFinish?: boolean;
  },
  processOutputs?: (o: Record<string, unknown>) => Record<string, unknown>,
): {
  run: RunTree;
  /** Hand the run's create over now, if it was kept for finish() and not handed over yet. */
  create(): void;
  finish(
    outputs?: Record<string, unknown>,
    error?: unknown,
    prepare?: (metadata: Record<string, unknown>) => void,
    endMicros?: number,
    owned?: boolean,
  ): void;
} {
  const parent = init.began ? init.began.parent : runContext.getStore();
  const spec = {
    name: init.name,
    run_type: init.run_type,
    inputs: init.inputs,
    metadata: init.metadata,
    tags: init.tags,
    session_name: init.project,
    startMicros: init.began?.startMicros,
  };
  const run = parent ? parent.createChild(spec) : new RunTree(spec);
  let created = false;
  const create = () => {
    if (created) return;
    created = true;
    guarded(() => writer.createRun(run.toRun(), init.owned ? { owned: true } : undefined));
  };
  if (!init.createAtFinish) create();
  return {
    run,
    create,
    finish(outputs, error, prepare, endMicros, owned) {
      if (run.ended) return;
      let out = outputs;
      if (out && processOutputs) {
        try {
          out = processOutputs(out);
        } catch (e) {
          out = { error: `processOutputs failed: ${errorText(e)}` };
        }
      }
      // `prepare` completes an update at delivery (a token count, say), which a create cannot carry: the create goes first.
      if (prepare) create();
      run.end(out, error === undefined ? undefined : errorText(error), endMicros);
      // Outputs a processOutputs returned are the host's objects, not the producer's.
      const ownedPatch = owned === true && !(out && processOutputs);
      if (!created) {
        // One create of the whole run: what a create and its update merged in the writer's queue would be.
        created = true;
        guarded(() => writer.createRun(run.toRun(), init.owned && ownedPatch ? { owned: true } : undefined));
        return;
      }
      // `prepare` completes the update at delivery, off the caller's path; it gets the metadata that is sent.
      const metadata = { ...run.metadata };
      guarded(() =>
        writer.updateRun(
          run.id,
          { end_time: isoMicros(run.endMicros!), outputs: run.outputs, error: run.error, events: [...run.events], extra: { metadata } },
          prepare ? { prepare: () => prepare(metadata), owned: ownedPatch } : ownedPatch ? { owned: true } : undefined,
        ),
      );
    },
  };
}

export function traceable<F extends (...args: any[]) => any>(fn: F, opts: TraceableOptions = {}): F {
  if (!tracingEnabled()) return fn;
  const name = opts.name ?? (fn.name || "traceable");
  const runType = opts.run_type ?? "chain";
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    if (!tracingOn()) return fn.apply(this, args);
    const writer = opts.client ?? defaultWriter();
    if (!writer) return fn.apply(this, args);
    let inputs: Record<string, unknown>;
    try {
      inputs = inputsOf(args);
    } catch (err) {
      inputs = unreadable("inputs", err);
    }
    if (opts.processInputs) {
      try {
        inputs = opts.processInputs(inputs);
      } catch (e) {
        inputs = { error: `processInputs failed: ${errorText(e)}` };
      }
    }
    const { run, finish } = startRun(
      writer,
      {
        name,
        run_type: runType,
        inputs,
        metadata: opts.metadata ? { ...opts.metadata } : {},
        tags: opts.tags,
        project: opts.project ?? opts.project_name,
      },
      opts.processOutputs,
    );
    let result: unknown;
    try {
      result = runContext.run(run, () => fn.apply(this, args));
    } catch (err) {
      finish(undefined, err);
      throw err;
    }
    const shape = shapeOf(result);
    // The caller gets the object the function returned (an APIPromise keeps withResponse(), say).
    if (shape === "thenable") {
      // A native promise has nothing more to keep: a new promise of its outcome, so that one the caller leaves
      // unhandled is still reported as an unhandled rejection (a side branch that handled it would hide it).
      if (result instanceof Promise && Object.getPrototypeOf(result) === Promise.prototype)
        return result.then(
          (v) => {
            finish(outputsOf(v));
            return v;
          },
          (err) => {
            finish(undefined, err);
            throw err;
          },
        );
      try {
        return watchThenable(result as PromiseLike<unknown>, {
          value: (v) => finish(outputsOf(v)),
          error: (err) => finish(undefined, err),
          raw: (note) => finish(undefined, undefined, note),
        });
      } catch (err) {
        // A thenable whose members throw when read (a proxy): the caller gets it as it is, the run says why it ends here.
        finish({ error: `could not follow the returned thenable: ${errorText(err)}` });
        return result;
      }
    }
    if (shape === "asyncIterator") return traceAsyncIterator(result as AsyncIterator<unknown>, run, finish);
    if (shape === "iterator") return traceIterator(result as Iterator<unknown>, run, finish);
    finish(outputsOf(result));
    return result;
  };
  Object.defineProperty(wrapped, "name", { value: fn.name });
  return wrapped as unknown as F;
}

/**
 * Generators: each step runs inside the run's context; yielded values become the outputs (within the run's size budget: yielded.ts).
 * What the caller sends in goes to the traced generator as it would untraced: a value to
 * next(), an error to throw() (which it may catch and go on), and return() ends it.
 */
function traceIterator(
  it: Iterator<unknown>,
  run: RunTree,
  finish: (o?: Record<string, unknown>, e?: unknown) => void,
): Generator<unknown> {
  const yielded = new YieldedValues();
  const gen = (function* () {
    let input: unknown;
    let thrown = false;
    try {
      for (;;) {
        const send = input;
        const step = thrown ? runContext.run(run, () => it.throw!(send)) : runContext.run(run, () => it.next(send));
        if (step.done) {
          finish(yieldedOutputs(yielded, step.value));
          return step.value;
        }
        yielded.add(step.value);
        try {
          input = yield step.value;
          thrown = false;
        } catch (err) {
          // An iterator without throw() cannot be told: it is closed, and the error is the caller's.
          if (typeof it.throw !== "function") {
            it.return?.();
            throw err;
          }
          input = err;
          thrown = true;
        }
      }
    } catch (err) {
      if (!run.ended) finish(yieldedOutputs(yielded), err);
      throw err;
    } finally {
      if (!run.ended) {
        try {
          it.return?.();
        } finally {
          finish(yieldedOutputs(yielded), "cancelled");
        }
      }
    }
  })();
  return gen;
}

function traceAsyncIterator(
  it: AsyncIterator<unknown>,
  run: RunTree,
  finish: (o?: Record<string, unknown>, e?: unknown) => void,
): AsyncGenerator<unknown> {
  const yielded = new YieldedValues();
  return (async function* () {
    let input: unknown;
    let thrown = false;
    try {
      for (;;) {
        const send = input;
        const step = await (thrown ? runContext.run(run, () => it.throw!(send)) : runContext.run(run, () => it.next(send)));
        if (step.done) {
          finish(yieldedOutputs(yielded, step.value));
          return step.value;
        }
        yielded.add(step.value);
        try {
          input = yield step.value;
          thrown = false;
        } catch (err) {
          if (typeof it.throw !== "function") {
            await it.return?.();
            throw err;
          }
          input = err;
          thrown = true;
        }
      }
    } catch (err) {
      if (!run.ended) finish(yieldedOutputs(yielded), err);
      throw err;
    } finally {
      if (!run.ended) {
        try {
          await it.return?.();
        } finally {
          finish(yieldedOutputs(yielded), "cancelled");
        }
      }
    }
  })();
}
