/**
 * A real redis-server (Debian's package; `.ci/run` installs it) on a free
 * loopback port, with persistence off, for the shared rate-limiter tests.
 * Without one, `skipWithoutRedis()` skips them with a notice (fails under CI).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { installed, skipWithout } from "./services.js";

export const REDIS_HINT = "`apt-get install redis-server`; .ci/run does this";

/** Call at collection time: true when the Redis tests should be skipped (announced on stderr). */
export function skipWithoutRedis(): boolean {
  return skipWithout("redis-server", REDIS_HINT);
}

export interface RunningRedis {
  url: string;
  /** Stop the server without closing its connections (SIGSTOP): it holds every command unanswered. */
  pause(): void;
  /** Let a paused server answer again (SIGCONT). */
  resume(): void;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function startRedis(): Promise<RunningRedis> {
  if (!installed("redis-server")) throw new Error(`redis-server is not installed: ${REDIS_HINT}`);
  // A free port can be taken between the probe and the bind; try a few.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      child.stdout!.setEncoding("utf8").on("data", (d: string) => {
        out += d;
        if (out.includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      child.once("exit", () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (ready) {
      return {
        url: `redis://127.0.0.1:${port}`,
        pause: () => child.kill("SIGSTOP"),
        resume: () => child.kill("SIGCONT"),
        close: () =>
          new Promise((r) => {
            if (child.exitCode !== null) return r();
            child.kill("SIGCONT");
            child.once("exit", () => r());
            child.kill("SIGTERM");
          }),
      };
    }
    child.kill("SIGKILL");
    if (attempt >= 4) throw new Error(`redis-server did not start: ${out.slice(-500)}`);
  }
}
