/**
 * The typed error hierarchy. One class per failure a caller may want to handle
 * separately; every class carries enough to print a precise message. Every
 * error tracepipe throws is a TracepipeError: ValidationError (and its
 * NormalizeError, ConfigError), the store's StoreUnavailableError, the ingest SinkError, the collector's
 * HttpError, the control plane's RuleError / NotFoundError / ControlPlaneError,
 * the webhook policy's WebhookUrlError and the CLI's InputError.
 */
import type { Loc } from "./internal/types.js";

/** SPEC §7 ValidationError: where (`loc`), what (`msg`) and which rule (`type`). */
export interface Issue {
  loc: Loc;
  msg: string;
  type: string;
}

export class TracepipeError extends Error {
  override name = "TracepipeError";
}

/** Input failed validation. `issues` uses SPEC §7's `{loc, msg, type}` shape. */
export class ValidationError extends TracepipeError {
  override name = "ValidationError";
  readonly issues: Issue[];
  constructor(issues: Issue[], message?: string) {
    super(message ?? formatIssues(issues));
    this.issues = issues;
  }
}

/**
 * An adapter could not turn a payload into native messages. Adapters throw this
 * and nothing else (a property test holds them to it).
 */
export class NormalizeError extends ValidationError {
  override name = "NormalizeError";
}

/**
 * The store cannot do it now (its database is locked, busy or unreachable);
 * nothing of the call was stored, and the same call may succeed later.
 */
export class StoreUnavailableError extends TracepipeError {
  override name = "StoreUnavailableError";
}

/** A configuration value (option, env var, file) is wrong. */
export class ConfigError extends ValidationError {
  override name = "ConfigError";
}

/** zod's issues in SPEC §7's shape, under `prefix`. zod's issue codes name the rule, so they are the `type`. */
/** An input file cannot be read (missing, a directory, not gzip): a usage error, exit 2. */
export class InputError extends TracepipeError {
  override name = "InputError";
}

export function zodIssues(issues: readonly { path: PropertyKey[]; message: string; code: string }[], prefix: Loc = []): Issue[] {
  return issues.map((i) => ({ loc: [...prefix, ...(i.path as Loc)], msg: i.message, type: i.code }));
}

/** The same issues, located under `prefix`. */
export function prefixIssues(issues: readonly Issue[], prefix: Loc): Issue[] {
  return issues.map((i) => ({ ...i, loc: [...prefix, ...i.loc] }));
}

export function formatIssues(issues: Issue[]): string {
  if (issues.length === 0) return "invalid input";
  return issues.map((i) => `${i.loc.length ? i.loc.join(".") : "(root)"}: ${i.msg} [${i.type}]`).join("; ");
}
