/**
 * The environment, read one way everywhere: a variable set to an empty (or
 * blank) string counts as unset, so `TRACEPIPE_DB=` means the default file,
 * never a temporary database, and `TRACEPIPE_ENDPOINT=` means the embedded
 * store. Defaults are defined here once.
 *
 * LangSmith's variables are read as fallbacks (LANGSMITH_ENDPOINT,
 * LANGSMITH_API_KEY, LANGSMITH_PROJECT, LANGSMITH_TRACING), so an app set up
 * for the `langsmith` SDK traces through tracepipe by changing an import. A
 * TRACEPIPE_* variable, when set, always wins.
 */
import { dirname, join } from "node:path";

/** Where the embedded store lives when neither an option nor TRACEPIPE_DB says. */
export const DEFAULT_DB_PATH = join(".tracepipe", "traces.db");
/** The project (session_name) of runs that name none. */
export const DEFAULT_PROJECT = "default";

export type EnvName =
  | "TRACEPIPE_ENDPOINT"
  | "TRACEPIPE_API_KEY"
  | "TRACEPIPE_PROJECT"
  | "TRACEPIPE_DB"
  | "TRACEPIPE_STORE_URL"
  | "TRACEPIPE_TRACING"
  | "TRACEPIPE_WEBHOOK_TOKEN"
  | "TRACEPIPE_SAMPLING_RATE"
  | "TRACEPIPE_PRICES";

/** The LangSmith variable read when a TRACEPIPE_* variable is unset. */
export const LANGSMITH_FALLBACKS: Partial<Record<EnvName, string>> = {
  TRACEPIPE_ENDPOINT: "LANGSMITH_ENDPOINT",
  TRACEPIPE_API_KEY: "LANGSMITH_API_KEY",
  TRACEPIPE_PROJECT: "LANGSMITH_PROJECT",
  TRACEPIPE_TRACING: "LANGSMITH_TRACING",
};

function read(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === "" ? undefined : v;
}

/** The variable's value, or its LangSmith fallback's, or undefined when both are unset or blank. */
export function envValue(
  name: EnvName | (string & {}),
  env: NodeJS.ProcessEnv = process.env,
  opts: { fallback?: boolean } = {},
): string | undefined {
  const own = read(name, env);
  if (own !== undefined || opts.fallback === false) return own;
  const alt = LANGSMITH_FALLBACKS[name as EnvName];
  return alt ? read(alt, env) : undefined;
}

/** The embedded store's path: the option, else TRACEPIPE_DB, else the default. */
export function dbPathFrom(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return option ?? envValue("TRACEPIPE_DB", env) ?? DEFAULT_DB_PATH;
}

/** Whether a store target names a server database (PostgreSQL) rather than a SQLite file. */
export function isStoreUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** A store target as messages may show it: a URL's password replaced by `***`. */
export function redactStoreTarget(target: string): string {
  if (!isStoreUrl(target)) return target;
  try {
    const u = new URL(target);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return target.replace(/:[^:@/]*@/, ":***@");
  }
}

/**
 * Where the store is (store/open.ts openStore's target): `--store` (a URL, or a
 * path), else `--db`, else TRACEPIPE_STORE_URL, else TRACEPIPE_DB, else the
 * default file. A flag beats a variable; the URL variable beats the file one.
 */
export function storeTargetFrom(opts: { db?: string; store?: string }, env: NodeJS.ProcessEnv = process.env): string {
  return opts.store ?? opts.db ?? envValue("TRACEPIPE_STORE_URL", env) ?? dbPathFrom(undefined, env);
}

/**
 * Dead letters live beside the store, one file per kind, under `dead-letters/`:
 * `runs.jsonl` for runs a sink refused (the client), `backfill-lines.jsonl` for
 * log lines backfill could not turn into runs.
 */
export function deadLetterPathFor(dbPath: string, kind: "runs" | "backfill"): string {
  const base = dirname(dbPath === ":memory:" ? DEFAULT_DB_PATH : dbPath);
  return join(base, "dead-letters", kind === "runs" ? "runs.jsonl" : "backfill-lines.jsonl");
}
