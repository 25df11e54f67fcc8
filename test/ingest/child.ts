/** Runs test/ingest/fixtures/updates-child.ts in its own process (the ordering and fault tests). */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

const CHILD = fileURLToPath(new URL("./fixtures/updates-child.ts", import.meta.url));

/** Async, so a collector in this process keeps answering while the child runs. A negative `exitAfterMs` exits at once. */
export async function runChild(endpoint: string, spoolDir: string, count: number, project: string, exitAfterMs: number): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, endpoint, spoolDir, String(count), project, String(exitAfterMs)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  expect(code, stderr).toBe(0);
}
