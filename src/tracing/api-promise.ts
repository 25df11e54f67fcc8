/**
 * How a call's APIPromise (the OpenAI and Anthropic SDKs') is observed without
 * changing what the caller gets: its own `parseResponse` is wrapped, so the
 * parsed result is seen when (and only when) the caller's code parses it,
 * never twice. Shared by llm calls (llm.ts) and embedding calls.
 */
import type { Obj } from "../internal/obj.js";
import { quietly } from "../internal/quietly.js";

interface ApiPromiseLike {
  parseResponse: (...args: unknown[]) => unknown;
  responsePromise: Promise<unknown>;
  asResponse?: (...args: unknown[]) => unknown;
}

/** Whether `promise` is an APIPromise (the OpenAI and Anthropic SDKs'), as watchApiPromise recognises one. */
export function isApiPromise(promise: unknown): boolean {
  const p = promise as ApiPromiseLike | undefined;
  return typeof p?.parseResponse === "function" && typeof p.responsePromise?.then === "function";
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
    // A native promise (not a subclass such as APIPromise, whose then() parses): a reaction of our own on it,
    // and it goes back unchanged. Registered before anyone else's, the reaction sees the value before the
    // caller does, and the caller waits on no promise of ours (one step less between reply and caller).
    if (parsed instanceof Promise && Object.getPrototypeOf(parsed) === Promise.prototype) {
      // Handled here, a failure reaches the caller through `parsed` alone.
      parsed.then(
        (value: unknown) => quietly(() => onValue(value)),
        (err: unknown) => quietly(() => onError(err)),
      );
      return parsed;
    }
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
  // HTTP errors (4xx/5xx, network) reject the response before any parsing. A promise that follows it takes its
  // place rather than a reaction on it alone: a reaction counts as handling it, and a failed call the app never
  // awaits would no longer be reported as an unhandled rejection (by default, ending the process) as it is
  // untraced. Every way the SDK reads the call (then, withResponse, asResponse) starts from this property.
  const response = p.responsePromise;
  const followed = response.then(undefined, (err: unknown) => {
    quietly(() => onError(err));
    throw err;
  });
  try {
    p.responsePromise = followed;
  } catch {
    followed.catch(() => undefined); // a promise that cannot be changed: watched from the side, as before
  }
  const asResponse = p.asResponse;
  if (typeof asResponse === "function") {
    p.asResponse = (...args: unknown[]) => {
      const raw = asResponse.apply(p, args);
      // withResponse() parses as well, and its parse is chained first, so it has been seen by the time
      // this runs: only a response nobody parses is recorded as raw. Followed, not reacted to, for the same
      // reason as above; its failure reaches onError through responsePromise.
      if (!(raw instanceof Promise)) return raw;
      return raw.then((r: unknown) => {
        if (!seen) quietly(() => onRaw(r));
        return r;
      });
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
