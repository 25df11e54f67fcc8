import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** tsx's loader by absolute URL, so the CLI runs from any working directory. */
export const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;

/** The newest modification time of the files below `dir`. */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * How to start the CLI: its compiled entry when dist/ was built after every
 * source changed (`npm ci` builds it, and so does a whole-suite run whose
 * dist/ is stale, in test/helpers/build-setup.ts; the build writes its stamp
 * file last, scripts/build.mjs), else the sources through tsx. A process through tsx takes ~0.3 s
 * more to start, and the suite starts some hundred and fifty: about a sixth of
 * its time on two cores. Both run the same code; a stale dist/ is never used.
 */
function cliArgs(): string[] {
  const stamp = join(ROOT, "dist/.build-stamp");
  const compiled = join(ROOT, "dist/src/cli/run.js");
  if (existsSync(stamp) && existsSync(compiled)) {
    const built = statSync(stamp).mtimeMs;
    const sources = Math.max(newest(join(ROOT, "src")), newest(join(ROOT, "adapters")), statSync(join(ROOT, "package.json")).mtimeMs);
    if (sources < built) return [compiled];
  }
  return ["--import", TSX, join(ROOT, "src/cli/run.ts")];
}
export const CLI: readonly string[] = cliArgs();

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of running) c.kill("SIGKILL");
});

/** Run the real CLI in a child process (see CLI: compiled when dist/ is fresh, else through tsx, so no build is needed). */
export function runCli(
  args: string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    // Without timeoutMs the test's own time bounds the wait: a fixed deadline here is one a CLI
    // starved by a busy machine can miss. A child still running when the test process ends is killed.
    const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs);
    running.add(child);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? "");
  });
}

export function jsonLines(text: string): unknown[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}
