/**
 * The environment, read one way everywhere: a variable set to an empty (or
 * blank) string counts as unset, so `TRACEPIPE_DB=` means the default file,
 * never a temporary database, and `TRACEPIPE_ENDPOINT=` means the embedded
 * store. Defaults are defined here once.
 */
import { join } from "node:path";

/** Where the embedded store lives when neither an option nor TRACEPIPE_DB says. */
export const DEFAULT_DB_PATH = join(".tracepipe", "traces.db");
/** The project (session_name) of runs that name none. */
export const DEFAULT_PROJECT = "default";

export type EnvName = "TRACEPIPE_ENDPOINT" | "TRACEPIPE_API_KEY" | "TRACEPIPE_PROJECT" | "TRACEPIPE_DB" | "TRACEPIPE_TRACING" | "TRACEPIPE_WEBHOOK_TOKEN";

/** The variable's value, or undefined when it is unset or blank. */
export function envValue(name: EnvName | (string & {}), env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === "" ? undefined : v;
}

/** The embedded store's path: the option, else TRACEPIPE_DB, else the default. */
export function dbPathFrom(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return option ?? envValue("TRACEPIPE_DB", env) ?? DEFAULT_DB_PATH;
}
