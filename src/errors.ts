/**
 * The typed error hierarchy. One class per failure a caller may want to handle
 * separately; every class carries enough to print a precise message.
 */

/** SPEC §7 ValidationError: where (`loc`), what (`msg`) and which rule (`type`). */
export interface Issue {
  loc: (string | number)[];
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

/** The server or limiter refused for rate reasons; `retryAfterMs` when known. */
export class RateLimitError extends TracepipeError {
  override name = "RateLimitError";
  constructor(message: string, readonly retryAfterMs?: number) {
    super(message);
  }
}

/** Network failure or an unexpected HTTP status while talking to an endpoint. */
export class TransportError extends TracepipeError {
  override name = "TransportError";
  constructor(message: string, readonly status?: number, readonly detail?: unknown) {
    super(message);
  }
}

/** A configuration value (option, env var, file) is wrong. */
export class ConfigError extends ValidationError {
  override name = "ConfigError";
}

export function formatIssues(issues: Issue[]): string {
  if (issues.length === 0) return "invalid input";
  return issues
    .map((i) => `${i.loc.length ? i.loc.join(".") : "(root)"}: ${i.msg} [${i.type}]`)
    .join("; ");
}
