/**
 * wrapBedrock(client): the same Amazon Bedrock Runtime client, with its
 * Converse and ConverseStream calls traced as `llm` runs (provider `bedrock`,
 * the bedrock-converse adapter, run name `ChatBedrockConverse`). Every other
 * command sent through the client passes untouched.
 *
 * Why the SDK's own middleware stack rather than patching `send`:
 * - `send` has three call shapes (a promise, `send(cmd, cb)`, `send(cmd,
 *   options, cb)`); a middleware sees every call whichever shape sent it;
 * - the operation is told by `context.commandName`, not `instanceof`, so a
 *   command class from a second copy of the SDK is still recognised;
 * - an `initialize` middleware runs once per call, outside the retry loop (a
 *   later step), so retries never make extra runs, and it gets the output
 *   deserialized, with ConverseStream's `output.stream` already the async
 *   iterable of events the caller will read.
 *
 * Nothing here imports the AWS SDK: the client is reached structurally, so the
 * main entry stays free of it. Only the command input and output are recorded:
 * credentials, signing headers and the client never enter a run.
 */
import { bedrockConverse } from "../../adapters/index.js";
import { getDefaultClient } from "../ingest/default.js";
import { tracingEnabled, tracingOn } from "./context.js";
import { LlmCall, type WrapOptions } from "./llm.js";
import { WRAPPED } from "../internal/wrapped.js";
import type { Obj } from "../internal/obj.js";
import { quietly } from "../internal/quietly.js";

/** The parts of smithy's middleware interfaces this module uses. */
interface HandlerArgs {
  input: unknown;
}
interface HandlerOutput {
  output: unknown;
}
type Handler = (args: HandlerArgs) => Promise<HandlerOutput>;
/** smithy's per-call context: `__smithy_context.abortSignal` is the `abortSignal` the caller passed to send(). */
type Middleware = (next: Handler, context: { commandName?: unknown; __smithy_context?: { abortSignal?: unknown } }) => Handler;
interface MiddlewareStackLike {
  add(
    middleware: Middleware,
    options: { step: "initialize"; name: string; priority?: "high" | "normal" | "low"; override?: boolean; tags?: string[] },
  ): void;
}

const TRACED_COMMANDS: Record<string, boolean> = { ConverseCommand: false, ConverseStreamCommand: true };
const MIDDLEWARE_NAME = "tracepipeBedrockConverse";

function tracingMiddleware(opts: WrapOptions): Middleware {
  return (next, context) => async (args) => {
    const name = typeof context.commandName === "string" ? context.commandName : "";
    const streaming = Object.hasOwn(TRACED_COMMANDS, name) ? TRACED_COMMANDS[name] : undefined;
    if (streaming === undefined || !tracingOn() || typeof args.input !== "object" || args.input === null) return next(args);
    let call: LlmCall | undefined;
    quietly(() => {
      call = new LlmCall(bedrockConverse, "bedrock", args.input as Obj, opts.client ?? getDefaultClient(), opts, "ChatBedrockConverse");
    });
    if (!call) return next(args);
    const traced = call;
    let result: HandlerOutput;
    try {
      result = await next(args);
    } catch (err) {
      // HTTP errors (a 400 ValidationException, a throttle) and network failures: recorded, then the caller's.
      quietly(() => traced.fail(err));
      throw err;
    }
    quietly(() => {
      const output = result.output as Obj | undefined;
      if (!streaming) traced.succeed(output);
      else if (output && typeof output.stream === "object" && output.stream !== null) {
        // An aborted ConverseStream ends quietly, as if complete: the signal says it was cut short.
        traced.abortedBy(context.__smithy_context?.abortSignal);
        output.stream = traced.observeIterable(output.stream);
      } else traced.fail("ConverseStream returned no stream");
    });
    return result;
  };
}

/**
 * Trace a `BedrockRuntimeClient` (from `@aws-sdk/client-bedrock-runtime`):
 *
 *   const bedrock = wrapBedrock(new BedrockRuntimeClient({ region: "us-east-1" }));
 *   await bedrock.send(new ConverseCommand({ modelId, messages }));
 *
 * Returns the same client. Wrapping twice traces once; with
 * `TRACEPIPE_TRACING=false` the client is returned untouched.
 */
export function wrapBedrock<T extends object>(client: T, opts: WrapOptions = {}): T {
  if (!tracingEnabled()) return client;
  const stack = (client as { middlewareStack?: Partial<MiddlewareStackLike> }).middlewareStack;
  if (!stack || typeof stack.add !== "function")
    throw new TypeError("wrapBedrock expects a BedrockRuntimeClient (client.middlewareStack.add)");
  if ((client as Record<symbol, unknown>)[WRAPPED]) return client; // wrapping twice would trace every call twice
  // `high` priority: outermost in the initialize step, so the input is the caller's, as sent.
  (stack as MiddlewareStackLike).add(tracingMiddleware(opts), {
    step: "initialize",
    name: MIDDLEWARE_NAME,
    priority: "high",
    override: true,
    tags: ["TRACEPIPE"],
  });
  Object.defineProperty(client, WRAPPED, { value: true });
  return client;
}
