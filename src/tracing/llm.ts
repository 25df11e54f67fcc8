/**
 * The shared core of wrapOpenAI, wrapAnthropic and wrapGemini: one vendor call becomes one
 * `llm` run whose inputs and outputs are native messages (via the adapters),
 * with trace_provider / trace_model_name, invocation params, usage (reported,
 * else estimated) and, for streams, a `new_token` event at the first token.
 *
 * The caller gets back exactly what the SDK returned: the same APIPromise, the
 * same Stream object. Observation happens through two hooks that change
 * nothing the caller can see:
 * - the APIPromise's own `parseResponse` is wrapped (api-promise.ts), so the
 *   parsed result is seen when (and only when) the caller's code parses it, never twice;
 * - a Stream's `iterator` factory is wrapped, so every way of reading it
 *   (for await, tee(), toReadableStream(), the SDK's stream helpers) passes
 *   each chunk through one accumulator.
 * SDKs that return plain Promises and async generators (Gemini) use
 * `succeed` and `wrapIterator` through observe.ts instead.
 *
 * The run itself is built after the call returns (see LlmCall): the caller's
 * path only copies what the call had and takes its times.
 */
import type { Adapter, RequestResult, ResponseResult, StreamAccumulator } from "../../adapters/types.js";
import type { RunWriter } from "../run/writer.js";
import type { RunTree } from "../run/tree.js";
import { nowMicros } from "../run/ids.js";
import { serialize } from "../run/serialize.js";
import { callFromResults, llmFields, messageIssues } from "../run/llm.js";
import { later } from "../run/deferred.js";
import { startRun } from "./traceable.js";
import { runContext } from "./context.js";
import { plainCopy } from "./snapshot.js";
import type { Obj } from "../internal/obj.js";
import { errorText } from "../internal/quietly.js";
import { noteUnparsed, watchApiPromise } from "./api-promise.js";

export interface WrapOptions {
  /** Where runs go; the default client otherwise. */
  client?: RunWriter;
  project?: string;
  /** Run name. Default `ChatOpenAI` / `ChatAnthropic` / `ChatGoogleGenerativeAI`. */
  name?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  /** Record every streamed chunk as a `new_chunk` event (off by default: it grows runs a lot). */
  chunkEvents?: boolean;
  processInputs?: (inputs: Record<string, unknown>) => Record<string, unknown>;
  processOutputs?: (outputs: Record<string, unknown>) => Record<string, unknown>;
}

interface StreamLike {
  iterator: () => AsyncIterator<unknown>;
  /** The SDK's controller of the request: aborting it ends the stream quietly, as if it were complete. */
  controller?: { signal?: AbortSignal };
}

function isAbort(err: unknown): boolean {
  const name = (err as { name?: string } | undefined)?.name ?? "";
  return name === "AbortError" || name === "APIUserAbortError";
}

/** An event seen on the call's path, recorded on the run when it is built: [name, microseconds, kwargs]. */
type SeenEvent = [name: string, micros: number, kwargs?: Obj];

/**
 * One traced call. On the caller's path it takes only what must be taken
 * then: the start time, the parent run, a copy of the request body (the
 * caller may change it once `create` returns), and later a copy of the reply
 * and the end time. Building the run (normalizing, the llm fields, usage and
 * cost, the writer's sampling, masking and queueing) is deferred work
 * (run/deferred.ts), run in order after the caller has its result. A call
 * that has ended by the time its start is built (both wait in the same batch)
 * is handed over as one create of the whole run; one still running, as a
 * create and later an update. A body or reply that is not plain JSON is
 * normalized at call time instead (see snapshot.ts), which is its copy.
 */
export class LlmCall {
  private run?: RunTree;
  /** Hands the run's create over if it was kept for its end and the end never handed it over (startRun's `create`). */
  private createRun?: () => void;
  private finishRun?: (outputs?: Obj, error?: unknown, prepare?: (metadata: Obj) => void, endMicros?: number, owned?: boolean) => void;
  private request?: RequestResult;
  /** The call has ended (or failed): later signals are ignored. */
  private done = false;
  /** The body the run is built from: the caller's copy, or the body itself when it was read at call time. */
  private readonly body: Obj;
  private readonly events: SeenEvent[] = [];
  /** The body was copied at call time. */
  private readonly copied: boolean;
  /**
   * The run's create holds only this call's own values (built from its copies, user metadata
   * copied, no processInputs): the writer may check it rather than copy it (RunWriter's `owned`).
   */
  private owned = false;
  /** The signal of a streamed request: aborted when the stream ends, the run was cut short, not complete. */
  private signal?: { readonly aborted: boolean };
  /** The request was aborted when the call ended (see `signal`). */
  private aborted = false;

  constructor(
    private readonly adapter: Adapter,
    private readonly provider: string,
    body: Obj,
    private readonly writer: RunWriter,
    private readonly opts: WrapOptions,
    private readonly defaultName: string,
  ) {
    const began = { parent: runContext.getStore(), startMicros: nowMicros() };
    const copy = plainCopy(body);
    this.body = copy ?? body;
    this.copied = copy !== undefined;
    // Deferred, a start that throws is dropped by the queue; at call time it throws to the wrapper, which then calls untraced.
    if (copy) later(() => this.start(began));
    else this.start(began);
  }

  /** Normalize the request and hand the run's create to the writer. */
  private start(began: { parent: RunTree | undefined; startMicros: number }): void {
    const { body, opts, provider } = this;
    let inputs: Obj;
    let metadata: Obj;
    try {
      this.request = this.adapter.normalizeRequest(body);
      const f = llmFields(callFromResults(this.request, undefined), { validation: "later", estimate: "never" });
      inputs = f.inputs;
      // A deep copy of the host's metadata when it is plain JSON, so the run holds nothing of the host's.
      const own = opts.metadata === undefined ? {} : plainCopy(opts.metadata);
      this.owned = this.copied && own !== undefined && !opts.processInputs;
      // Object.assign, not spreads around a field: V8 takes a slow path for a spread followed by fields.
      metadata = own ?? Object.assign({}, opts.metadata);
      metadata.trace_provider = provider;
      Object.assign(metadata, f.metadata);
      // Read from the body's plain copy they are plain already; from the body itself they are the host's.
      if (metadata.invocation_params && !this.copied) metadata.invocation_params = serialize(metadata.invocation_params);
    } catch (err) {
      this.owned = false;
      // Keep what was sent even when it is not a shape we know; say why.
      inputs = serialize(body) as Obj;
      metadata = { ...opts.metadata, trace_provider: provider, normalize_error: (err as Error).message };
      if (typeof body.model === "string") metadata.trace_model_name = body.model;
    }
    // A processInputs that throws leaves the call untraced (no run, so nothing it meant to hide is sent).
    if (opts.processInputs) inputs = opts.processInputs(inputs);
    const { run, create, finish } = startRun(
      this.writer,
      {
        name: opts.name ?? this.defaultName,
        run_type: "llm",
        inputs,
        metadata,
        tags: opts.tags,
        project: opts.project,
        began,
        owned: this.owned,
        // The call has ended already (both halves wait in the same deferred batch): one create of the whole
        // run, handed over by the end's build right after this, instead of a create and an update to merge.
        createAtFinish: this.done,
      },
      opts.processOutputs,
    );
    this.run = run;
    this.createRun = create;
    this.finishRun = finish;
  }

  /** Mark the call ended now and build its end later, after its start. False when it had ended already. */
  private end(build: (endMicros: number) => void): boolean {
    if (this.done) return false;
    this.done = true;
    this.aborted = this.signal?.aborted === true;
    const endMicros = nowMicros();
    later(() => {
      const run = this.run;
      if (!run) return; // its start failed (a processInputs that threw): the call goes untraced
      // The events seen on the way (first token, chunks) join the run before its update is made.
      for (const [name, micros, kwargs] of this.events) run.addEvent(name, kwargs, micros);
      try {
        build(endMicros);
      } finally {
        // A build that failed before handing anything over still leaves the run's create (a no-op once handed over).
        this.createRun!();
      }
    });
    return true;
  }

  /**
   * Outputs from a result, through the run builder: usage reported or estimated, the model recorded.
   * `ownResult`: the result holds none of the host's objects (read from this call's copy of the reply).
   */
  private complete(res: ResponseResult, error: unknown, endMicros: number, ownResult: boolean): void {
    // The OpenAI and Anthropic SDKs end an aborted stream without an error: the caller's abort (controller.abort(),
    // an AbortSignal, MessageStream.abort()) still cut the output short, and the run says so.
    if (error === undefined && this.aborted) error = "cancelled";
    const call = callFromResults(this.request, res);
    call.provider ??= this.provider;
    // Counting tokens is the dearest step of a traced call, growing with the text, so it
    // runs when the run is serialized for delivery; processOutputs may copy the messages, so then it runs here.
    // The request half (invocation_params) was recorded when the run started.
    const f = llmFields(call, {
      validation: "later",
      estimate: this.opts.processOutputs ? "now" : "defer",
      rawInputs: this.run!.inputs,
      withoutParams: true,
    });
    Object.assign(this.run!.metadata, f.metadata);
    // Checking the messages: the same checks as every producer's (run/llm.ts), recorded in the metadata
    // that is sent. With a count to make they run at delivery, after it; without one they run now, so the
    // update is whole when it is handed over: checked once then, with no deferred step to measure, run and check again.
    const inputs = call.inputs ?? [];
    const outputs = f.outputs?.messages;
    const estimate = f.estimate;
    let prepare: ((metadata: Obj) => void) | undefined;
    if (estimate)
      prepare = (metadata) => {
        estimate();
        const problems = messageIssues(inputs, outputs);
        if (problems.length) metadata.validation_errors = problems;
      };
    else {
      const problems = messageIssues(inputs, outputs);
      if (problems.length) this.run!.metadata.validation_errors = problems;
    }
    this.finishRun!(f.outputs ?? { messages: [] }, error, prepare, endMicros, this.owned && ownResult);
  }

  /**
   * The response as the run's outputs: `read` is the adapter's reading of it taken at call time (or why it
   * could not read it, `response` then being its safe copy); without it, `response` is a copy to read now.
   */
  private completeFrom(response: unknown, read: ResponseResult | Error | undefined, endMicros: number): void {
    let res: ResponseResult;
    try {
      if (read instanceof Error) throw read;
      res = read ?? this.adapter.normalizeResponse(response, { request: this.body });
    } catch (err) {
      const raw = read instanceof Error ? response : serialize(response);
      this.finishRun!(
        { response: raw as Obj },
        `could not normalize the response: ${(err as Error).message}`,
        undefined,
        endMicros,
        this.owned,
      );
      return;
    }
    // Read now from the reply's copy, or at call time from the reply itself (which may hold the host's objects).
    this.complete(res, undefined, endMicros, read === undefined);
  }

  fail(err: unknown): void {
    // The error's text now: the error object is the caller's.
    const text = errorText(err);
    this.end((endMicros) => this.finishRun!(undefined, text, undefined, endMicros, this.owned));
  }

  /** Watch an APIPromise without changing it (see the module comment). */
  observe<T>(promise: T, streaming: boolean): T {
    return watchApiPromise(
      promise,
      (value) => {
        if (streaming) this.instrument(value as StreamLike);
        else this.succeed(value);
      },
      (err) => this.fail(err),
      (response) => this.unparsed(response),
    );
  }

  /** The caller took the raw Response and parsed nothing: the run ends without outputs, saying so. */
  private unparsed(response: unknown): void {
    if (this.done) return;
    const note = noteUnparsed(response);
    this.end((endMicros) => this.finishRun!(undefined, undefined, note, endMicros, this.owned));
  }

  /** A call's result, however the SDK delivered it: normalized and recorded (one we cannot read is kept raw, with why). */
  succeed(value: unknown): void {
    if (this.done) return;
    // The caller gets `value` next and may change it: a copy, or (not plain JSON) the adapter's reading of it now.
    let response: unknown = plainCopy(value);
    let read: ResponseResult | Error | undefined;
    if (response === undefined) {
      try {
        read = this.adapter.normalizeResponse(value, { request: this.body });
      } catch (err) {
        read = err instanceof Error ? err : new Error(String(err));
        // A reply we cannot read is kept raw, with why.
        response = serialize(value);
      }
    }
    this.end((endMicros) => this.completeFrom(response, read, endMicros));
  }

  /**
   * A plain async iterable of stream events (SDKs without OpenAI's Stream, e.g.
   * Bedrock's `output.stream`): its `Symbol.asyncIterator` is wrapped in place,
   * so the caller keeps the same object and reads every event as the SDK yields
   * it, each passing through one accumulator. A frozen iterable is wrapped in a
   * new one instead.
   */
  observeIterable<T extends object>(source: T): T {
    const make = (source as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator];
    if (typeof make !== "function") return source;
    const wrap = (it: AsyncIterator<unknown>) => this.wrapIterator(it);
    const traced = function (this: unknown) {
      return wrap(make.call(this));
    };
    if (Object.isExtensible(source)) {
      try {
        const enumerable = Object.getOwnPropertyDescriptor(source, Symbol.asyncIterator)?.enumerable ?? false;
        Object.defineProperty(source, Symbol.asyncIterator, { value: traced, writable: true, configurable: true, enumerable });
        return source;
      } catch {
        // a non-configurable own property: fall through to a new iterable
      }
    }
    return { [Symbol.asyncIterator]: () => traced.call(source) } as unknown as T;
  }

  /**
   * The request's abort signal (an AbortSignal, or the AWS SDK's like of one), for an SDK whose stream
   * ends quietly when the request is aborted: aborted when the call ends, the run is cancelled.
   */
  abortedBy(signal: unknown): void {
    if (typeof (signal as { aborted?: unknown } | null | undefined)?.aborted === "boolean") this.signal = signal as { aborted: boolean };
  }

  private instrument(stream: StreamLike): void {
    if (typeof stream?.iterator !== "function") return;
    this.abortedBy(stream.controller?.signal);
    const make = stream.iterator;
    const wrap = (it: AsyncIterator<unknown>) => this.wrapIterator(it);
    stream.iterator = function (this: unknown) {
      return wrap(make.call(this));
    };
  }

  /**
   * An iterator whose chunks pass through one stream accumulator on their way
   * to the caller, unchanged. `view` is what the run sees of a chunk (an SDK may
   * attach transport details, like response headers, that a run must not hold).
   *
   * A chunk costs one reaction and its fold, nothing more: the fold keeps only
   * what the run needs (the text pieces, ids), and the accumulator is read
   * into a result once, in the deferred build of the run.
   */
  wrapIterator(it: AsyncIterator<unknown>, view?: (chunk: unknown) => unknown): AsyncIterator<unknown> {
    const acc: StreamAccumulator = this.adapter.createStreamAccumulator({ request: this.body });
    const events = this.events;
    const chunkEvents = this.opts.chunkEvents === true;
    let firstToken = false;
    /** The stream ended or the caller stopped: the accumulator holds the call's output and folds nothing more. */
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      if (this.done) return;
      const text = error === undefined ? undefined : errorText(error);
      // The accumulator folded each chunk as it came (its text is the call's, whatever the caller does to the
      // chunks since: an SDK's own stream helper may change the events it reads); reading it into a result
      // joins the pieces, work for the deferred build rather than the caller's last step.
      this.end((endMicros) => {
        let res: ResponseResult;
        let failure = text;
        try {
          res = acc.result();
        } catch (err) {
          res = { messages: [] };
          failure ??= errorText(err);
        }
        // The accumulator's result may hold values of the chunks it read (the host's objects, which the caller
        // may still change). A plain copy of the result, made here, is this call's own, so the run is checked
        // rather than copied whole at delivery, as a non-streamed call's run built from its reply's copy is; a
        // result that is not plain JSON stays as it is and is copied at delivery.
        const own = plainCopy(res);
        this.complete(own ?? res, failure, endMicros, own !== undefined);
      });
    };
    // The reaction is made once per stream, not per chunk, and never throws: a chunk we cannot fold (a
    // hostile getter, a shape we do not know) is the caller's business, not a reason to break their stream.
    const fold = (step: IteratorResult<unknown>): void => {
      if (settled) return;
      try {
        if (step.done) {
          settle();
          return;
        }
        if (acc.push(view ? view(step.value) : step.value) && !firstToken) {
          firstToken = true;
          events.push(["new_token", nowMicros()]);
        }
      } catch {
        // as above
      }
      if (chunkEvents) {
        try {
          events.push(["new_chunk", nowMicros(), { chunk: serialize(view ? view(step.value) : step.value) }]);
        } catch {
          // as above
        }
      }
    };
    const onStep = (step: IteratorResult<unknown>) => {
      fold(step);
      return step;
    };
    const onError = (err: unknown): never => {
      settle(isAbort(err) ? "cancelled" : err);
      throw err;
    };
    // On a side branch the chunk and the failure reach the caller through the SDK's own promise: the
    // branch's own promise must never reject (nobody waits on it), and a failure has nothing to rethrow.
    const onSideError = (err: unknown): void => {
      try {
        settle(isAbort(err) ? "cancelled" : err);
      } catch {
        // recording a failure never fails the host's read
      }
    };
    const stop = {
      return: (value?: unknown) => {
        // The caller stopped early (break, or an abort surfaced as return): keep the partial output.
        settle("cancelled");
        return it.return ? it.return(value) : Promise.resolve({ done: true as const, value });
      },
      throw: (err?: unknown) => {
        settle(err);
        return it.throw ? it.throw(err) : Promise.reject(err);
      },
    };
    // The SDKs' streams are async generators: checked once here rather than on every chunk. Their own `next`
    // is called (not a later replacement of it.next): a native promise every step, never thrown, and a
    // generator receives undefined whether or not a value was passed.
    if (isAsyncGenerator(it))
      return {
        next: (value?: unknown) => {
          const step = asyncGeneratorNext.call(it, value);
          void step.then(fold, onSideError);
          return step;
        },
        ...stop,
      };
    return {
      // A value passed to next() reaches the SDK's iterator only when one was passed (`arguments`, not a
      // rest parameter: no array made per chunk).
      next: function (this: unknown, value?: unknown) {
        const step = arguments.length === 0 ? it.next() : it.next(value);
        // A native promise (an async generator's, as the SDKs' streams are) goes back to the caller as it is,
        // with our reaction registered on it first: the chunk is folded before the caller's code sees it, and
        // the caller waits on no promise of ours (one step less between the chunk and the caller).
        if (step instanceof Promise && Object.getPrototypeOf(step) === Promise.prototype) {
          void step.then(fold, onSideError);
          return step;
        }
        return Promise.resolve(step).then(onStep, onError);
      },
      ...stop,
    };
  }
}

/** The `next` every async generator object inherits: it returns a native promise each call and never throws. */
const asyncGeneratorNext = (Object.getPrototypeOf(async function* () {}.prototype) as AsyncGenerator<unknown>).next;

/** `it` steps by the async generators' own `next` (an own or inherited replacement is another iterator). */
function isAsyncGenerator(it: AsyncIterator<unknown>): it is AsyncGenerator<unknown> {
  try {
    return it.next === asyncGeneratorNext;
  } catch {
    return false;
  }
}
