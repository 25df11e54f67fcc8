/**
 * How traceable() watches a thenable other than a native promise its function returned,
 * handing the caller that very object: an OpenAI or Anthropic APIPromise keeps
 * `withResponse()` / `asResponse()`, and a lazy thenable (a query builder that
 * runs when awaited) runs when, and as often as, the caller awaits it, as it
 * would untraced.
 * (traceable() follows a native promise itself: nothing more to keep there.)
 * - an APIPromise: through its own parse step (api-promise.ts), so the body is
 *   parsed only if the caller parses it (a caller reading the raw Response
 *   still can);
 * - any other thenable: its `then` is replaced on the object itself, so the
 *   outcome is seen when the caller's code asks for it;
 * - a thenable that cannot be changed (frozen), or a native promise: a new
 *   promise of its outcome, which rejects as it does (an ignored rejection is
 *   still reported as unhandled).
 */
import { isApiPromise, noteUnparsed, watchApiPromise } from "./api-promise.js";
import { quietly } from "../internal/quietly.js";

export interface ThenableWatch {
  value(v: unknown): void;
  error(err: unknown): void;
  /** The caller took the raw Response of an APIPromise and parsed nothing: `note` says so in the run's metadata. */
  raw(note: (metadata: Record<string, unknown>) => void): void;
}

type Then = (onValue?: unknown, onError?: unknown) => unknown;

export function watchThenable<T extends PromiseLike<unknown>>(result: T, watch: ThenableWatch): T | Promise<unknown> {
  const seeValue = (v: unknown) => quietly(() => watch.value(v));
  const seeError = (err: unknown) => quietly(() => watch.error(err));
  const native = result instanceof Promise && Object.getPrototypeOf(result) === Promise.prototype;
  if (!native && isApiPromise(result)) return watchApiPromise(result, seeValue, seeError, (r) => quietly(() => watch.raw(noteUnparsed(r))));
  const then = result.then as Then;
  if (!native && Object.isExtensible(result)) {
    try {
      Object.defineProperty(result, "then", {
        value: function (this: unknown, onValue?: unknown, onError?: unknown) {
          return then.call(
            this,
            (v: unknown) => {
              seeValue(v);
              return typeof onValue === "function" ? onValue(v) : v;
            },
            (err: unknown) => {
              seeError(err);
              if (typeof onError === "function") return onError(err);
              throw err;
            },
          );
        },
        writable: true,
        configurable: true,
        enumerable: false,
      });
      return result;
    } catch {
      // a non-configurable own `then` (or a proxy that refuses): a promise of its outcome instead
    }
  }
  return Promise.resolve(result).then(
    (v) => {
      seeValue(v);
      return v;
    },
    (err) => {
      seeError(err);
      throw err;
    },
  );
}
