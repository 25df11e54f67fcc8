/**
 * Tests that need a system program (redis-server, script(1); the browser's
 * check is in test/viewer/browser.ts). On a developer's machine without it
 * they are skipped with a notice on stderr, so `npm test` still runs
 * everything else; under CI (`CI` set, as `.ci/run` and hosted runners do) a
 * missing program is a failure, never a silent skip.
 */
import { spawnSync } from "node:child_process";

export function onCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = (env.CI ?? "").trim().toLowerCase();
  return ci !== "" && ci !== "0" && ci !== "false";
}

/** Whether `command --version` runs here. */
export function installed(command: string): boolean {
  const r = spawnSync(command, ["--version"], { stdio: "ignore" });
  return !r.error && r.status === 0;
}

/**
 * True when the caller should skip its tests: `command` is missing and this is not CI.
 * Prints why, with the install hint, so the skip is seen.
 */
export function skipWithout(command: string, installHint: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (installed(command)) return false;
  if (onCi(env)) return false; // run, and fail in set-up with the same hint
  process.stderr.write(
    `\n  NOTICE: ${command} is not installed, so the tests that need it are SKIPPED (${installHint}; with CI=true they fail instead).\n\n`,
  );
  return true;
}
