/**
 * Observation for SDKs that return plain Promises and async generators (the
 * `@google/genai` client), where llm.ts's hooks for OpenAI's and Anthropic's
 * APIPromise / Stream do not apply. Promises are followed as traceable()
 * follows what a function returns (thenable.ts):
 * - a whole reply: a native promise is followed by a new one that settles as
 *   it does, after the run has seen the outcome. A reaction on the SDK's own
 *   promise would count as handling it: a failure the app never awaits would no
 *   longer be reported as an unhandled rejection (by default, ending the
 *   process) as it is untraced. Another thenable is returned itself, its
 *   `then` watched;
 * - a stream (a promise of an async iterator): the same way, resolving to the
 *   same iterator object, whose `next` / `return` / `throw` are replaced on
 *   that object before the caller can reach it. Every way of reading it
 *   (`for await`, manual `next()`, `break`) goes through one accumulator; each
 *   chunk reaches the caller as the SDK yielded it.
 */
import type { LlmCall } from "./llm.js";
import { quietly } from "../internal/quietly.js";
import { watchThenable } from "./thenable.js";

/** What the run sees of a reply or chunk (transport details removed); the caller's value is never touched. */
export type View = (value: unknown) => unknown;

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null | undefined)?.then === "function";
}

function complete(call: LlmCall, value: unknown, view?: View): void {
  try {
    call.succeed(view ? view(value) : value);
  } catch (err) {
    quietly(() => call.fail(err));
  }
}

/**
 * Hands what `promise` settles to (or `promise` itself, when it is no promise) to `settle`; a rejection fails the call.
 * A promise is followed as traceable() follows what a function returns (thenable.ts): for a native one, a new promise
 * that settles as it does once `settle` has run.
 */
function watch<T>(call: LlmCall, promise: T, settle: (value: unknown) => void): T {
  if (!isThenable(promise)) {
    settle(promise);
    return promise;
  }
  return watchThenable(promise, { value: settle, error: (err) => call.fail(err), raw: () => undefined }) as T;
}

/** Watch a promise of a whole reply. Returns what watch() does. */
export function observeReply<T>(call: LlmCall, promise: T, view?: View): T {
  return watch(call, promise, (value) => complete(call, value, view));
}

interface IteratorLike {
  next: (...args: [] | [unknown]) => Promise<IteratorResult<unknown>>;
  return?: (value?: unknown) => Promise<IteratorResult<unknown>>;
  throw?: (err?: unknown) => Promise<IteratorResult<unknown>>;
}

/** Route an async iterator's methods, on the object itself, through the call's accumulator. */
export function instrumentIterator(call: LlmCall, it: unknown, view?: View): void {
  const target = it as IteratorLike | null | undefined;
  if (typeof target?.next !== "function") {
    call.fail(new TypeError("the SDK's stream is not an async iterator"));
    return;
  }
  const inner: AsyncIterator<unknown> = {
    next: target.next.bind(target),
    return: typeof target.return === "function" ? target.return.bind(target) : undefined,
    throw: typeof target.throw === "function" ? target.throw.bind(target) : undefined,
  };
  const wrapped = call.wrapIterator(inner, view);
  for (const k of ["next", "return", "throw"] as const) {
    Object.defineProperty(target, k, { value: wrapped[k], writable: true, configurable: true, enumerable: false });
  }
}

function instrument(call: LlmCall, it: unknown, view?: View): void {
  try {
    instrumentIterator(call, it, view);
  } catch (err) {
    quietly(() => call.fail(err));
  }
}

/** Watch a promise of an async iterator (a stream). Returns what watch() does. */
export function observeStream<T>(call: LlmCall, promise: T, view?: View): T {
  return watch(call, promise, (it) => instrument(call, it, view));
}
