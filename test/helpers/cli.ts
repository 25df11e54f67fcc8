import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ENTRY = fileURLToPath(new URL("../../src/cli/run.ts", import.meta.url));
/** tsx's loader by absolute URL, so the CLI runs from any working directory. */
export const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the real CLI in a child process (through tsx, so no build is needed). */
export function runCli(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX, ENTRY, ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? "");
  });
}

export function jsonLines(text: string): unknown[] {
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}
