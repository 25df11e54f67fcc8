/**
 * The shared core of wrapOpenAI, wrapAnthropic and wrapGemini: one vendor call becomes one
 * `llm` run whose inputs and outputs are native messages (via the adapters),
 * with trace_provider / trace_model_name, invocation params, usage (reported,
 * else estimated) and, for streams, a `new_token` event at the first token.
 *
 * The caller gets back exactly what the SDK returned: the same APIPromise, the
 * same Stream object. Observation happens through two hooks that change
 * nothing the caller can see:
 * - the APIPromise's own `parseResponse` is wrapped, so the parsed result is
 *   seen when (and only when) the caller's code parses it, never twice;
 * - a Stream's `iterator` factory is wrapped, so every way of reading it
 *   (for await, tee(), toReadableStream(), the SDK's stream helpers) passes
 *   each chunk through one accumulator.
 * SDKs that return plain Promises and async generators (Gemini) use
 * `succeed` and `wrapIterator` through observe.ts instead.
 */
import type { Adapter, RequestResult, ResponseResult, StreamAccumulator } from "../../adapters/types.js";
import type { RunWriter } from "../run/writer.js";
import type { RunTree } from "../run/tree.js";
import { nowMicros } from "../run/ids.js";
import { serialize } from "../run/serialize.js";
import { callFromResults, llmFields, messageIssues } from "../run/llm.js";
import { startRun } from "./traceable.js";
import type { Obj } from "../internal/obj.js";
import { quietly } from "../internal/quietly.js";

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

interface ApiPromiseLike {
  parseResponse: (...args: unknown[]) => unknown;
  responsePromise: Promise<unknown>;
  asResponse?: (...args: unknown[]) => unknown;
}

interface StreamLike {
  iterator: () => AsyncIterator<unknown>;
}

function isAbort(err: unknown): boolean {
  const name = (err as { name?: string } | undefined)?.name ?? "";
  return name === "AbortError" || name === "APIUserAbortError";
}

/**
 * Watch an APIPromise without changing what the caller gets: `onValue` sees the
 * parsed result when (and only when) the caller's code parses it, once;
 * `onError` sees an HTTP or parse failure; `onRaw` sees the Response of a call
 * whose caller took it raw (`asResponse()`) and parsed nothing, so that its
 * run still ends (the body is the caller's to read: it is not touched).
 * Anything else is returned untouched. Shared by llm calls and embedding calls.
 */
export function watchApiPromise<T>(
  promise: T,
  onValue: (value: unknown) => void,
  onError: (err: unknown) => void,
  onRaw: (response: unknown) => void = () => {},
): T {
  const p = promise as unknown as ApiPromiseLike;
  if (typeof p?.parseResponse !== "function" || typeof p.responsePromise?.then !== "function") return promise;
  const original = p.parseResponse;
  let seen = false;
  p.parseResponse = (...args: unknown[]) => {
    const parsed = original.apply(p, args);
    if (seen) return parsed;
    seen = true;
    return Promise.resolve(parsed).then(
      (value) => {
        quietly(() => onValue(value));
        return value;
      },
      (err) => {
        quietly(() => onError(err));
        throw err;
      },
    );
  };
  // HTTP errors (4xx/5xx, network) reject the response before any parsing.
  p.responsePromise.then(undefined, (err) => quietly(() => onError(err)));
  const asResponse = p.asResponse;
  if (typeof asResponse === "function") {
    p.asResponse = (...args: unknown[]) => {
      const response = asResponse.apply(p, args);
      // withResponse() parses as well, and its parse is chained first, so it has been seen by the time
      // this runs: only a response nobody parses is recorded as raw.
      Promise.resolve(response).then(
        (r) => {
          if (!seen) quietly(() => onRaw(r));
        },
        () => undefined, // the failure reaches onError through responsePromise
      );
      return response;
    };
  }
  return promise;
}

/** The finishing step of a run whose caller took the raw Response (watchApiPromise's onRaw): it says so in `metadata.unparsed_response`. */
export function noteUnparsed(response: unknown): (metadata: Obj) => void {
  const status = (response as { status?: unknown } | undefined)?.status;
  const note = { status: typeof status === "number" ? status : null, reason: "the caller read the raw response (asResponse)" };
  return (metadata) => {
    metadata.unparsed_response = note;
  };
}

export class LlmCall {
  private readonly run: RunTree;
  private readonly finishRun: (outputs?: Obj, error?: unknown, prepare?: (metadata: Obj) => void) => void;
  private readonly request?: RequestResult;
  private done = false;

  constructor(
    private readonly adapter: Adapter,
    private readonly provider: string,
    private readonly body: Obj,
    writer: RunWriter,
    private readonly opts: WrapOptions,
    defaultName: string,
  ) {
    let inputs: Obj;
    let metadata: Obj;
    try {
      this.request = adapter.normalizeRequest(body);
      const f = llmFields(callFromResults(this.request, undefined), { validation: "later", estimate: "never" });
      inputs = f.inputs;
      // Object.assign, not spreads around a field: V8 takes a slow path for a spread followed by fields.
      metadata = Object.assign({}, opts.metadata);
      metadata.trace_provider = provider;
      Object.assign(metadata, f.metadata);
      if (metadata.invocation_params) metadata.invocation_params = serialize(metadata.invocation_params);
    } catch (err) {
      // Keep what was sent even when it is not a shape we know; say why.
      inputs = serialize(body) as Obj;
      metadata = { ...opts.metadata, trace_provider: provider, normalize_error: (err as Error).message };
      if (typeof body.model === "string") metadata.trace_model_name = body.model;
    }
    if (opts.processInputs) inputs = opts.processInputs(inputs);
    const { run, finish } = startRun(
      writer,
      { name: opts.name ?? defaultName, run_type: "llm", inputs, metadata, tags: opts.tags, project: opts.project },
      opts.processOutputs,
    );
    this.run = run;
    this.finishRun = finish;
  }

  /** Outputs from a result, through the run builder: usage reported or estimated, the model recorded. */
  private complete(res: ResponseResult, error?: unknown): void {
    if (this.done) return;
    this.done = true;
    const call = callFromResults(this.request, res);
    call.provider ??= this.provider;
    // Counting tokens is the dearest step of a traced call (~0.1 ms per KB with tiktoken), so it
    // runs when the run is serialized for delivery, off the caller's path; processOutputs
    // may copy the messages, so then it runs here.
    const f = llmFields(call, { validation: "later", estimate: this.opts.processOutputs ? "now" : "defer", rawInputs: this.run.inputs });
    // The request half was recorded when the run started.
    delete f.metadata.invocation_params;
    Object.assign(this.run.metadata, f.metadata);
    // Checking the messages, like counting tokens, runs at delivery: the same checks as every
    // producer's (run/llm.ts), recorded in the metadata that is sent.
    const inputs = call.inputs ?? [];
    const outputs = f.outputs?.messages;
    const estimate = f.estimate;
    this.finishRun(f.outputs ?? { messages: [] }, error, (metadata) => {
      estimate?.();
      const problems = messageIssues(inputs, outputs);
      if (problems.length) metadata.validation_errors = problems;
    });
  }

  fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.finishRun(undefined, err);
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
    this.done = true;
    this.finishRun(undefined, undefined, noteUnparsed(response));
  }

  /** A call's result, however the SDK delivered it: normalized and recorded (one we cannot read is kept raw, with why). */
  succeed(value: unknown): void {
    if (this.done) return;
    try {
      this.complete(this.adapter.normalizeResponse(value, { request: this.body }));
    } catch (err) {
      this.finishRun({ response: serialize(value) as Obj }, `could not normalize the response: ${(err as Error).message}`);
      this.done = true;
    }
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

  private instrument(stream: StreamLike): void {
    if (typeof stream?.iterator !== "function") return;
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
   */
  wrapIterator(it: AsyncIterator<unknown>, view?: (chunk: unknown) => unknown): AsyncIterator<unknown> {
    const acc: StreamAccumulator = this.adapter.createStreamAccumulator({ request: this.body });
    const run = this.run;
    const chunkEvents = this.opts.chunkEvents === true;
    let firstToken = false;
    const settle = (error?: unknown) => {
      let res: ResponseResult;
      try {
        res = acc.result();
      } catch (err) {
        res = { messages: [] };
        error ??= err;
      }
      try {
        this.complete(res, error);
      } catch {
        // A writer that fails must not break the caller's stream: tracing never throws into the host.
      }
    };
    return {
      next: (...args: [] | [unknown]) =>
        it.next(...args).then(
          (step) => {
            if (step.done) settle();
            else {
              try {
                if (acc.push(view ? view(step.value) : step.value) && !firstToken) {
                  firstToken = true;
                  run.addEvent("new_token", undefined, nowMicros());
                }
              } catch {
                // A chunk we cannot fold is the caller's business, not a reason to break their stream.
              }
              if (chunkEvents) run.addEvent("new_chunk", { chunk: serialize(view ? view(step.value) : step.value) });
            }
            return step;
          },
          (err) => {
            settle(isAbort(err) ? "cancelled" : err);
            throw err;
          },
        ),
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
  }
}
