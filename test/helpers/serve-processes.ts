import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { CLI } from "./cli.js";

/**
 * One `tracepipe serve` child process that a test can kill and start again on
 * the same port, as a load balancer's backend would come back: the
 * multi-collector tests send each request to any of several of these.
 */
export interface ServeChild {
  readonly url: string;
  readonly port: number;
  /** Everything the process printed on stdout and stderr since it (re)started. */
  output(): string;
  /** The process id of the current process (changes on restart). */
  pid(): number | undefined;
  /** True while the process runs. */
  alive(): boolean;
  /** Send a signal and wait for the exit (SIGKILL: no shutdown hooks run, as when a machine dies). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start the process again on the same port with the same arguments; resolves once it listens. */
  restart(): Promise<void>;
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

const live = new Set<ChildProcess>();
let hooked = false;
function killAllAtExit(): void {
  if (hooked) return;
  hooked = true;
  process.once("exit", () => {
    for (const c of live) c.kill("SIGKILL");
  });
}

/** Spawns `serve` and resolves when its readiness line ("listening on http://...") appears. */
function launch(
  port: number,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  onOut: (d: string) => void,
  cli: readonly string[],
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...cli, "serve", "--host", "127.0.0.1", "--port", String(port), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  live.add(child);
  child.once("exit", () => live.delete(child));
  // No deadline of its own: a start on a busy machine may take long, and the hook or test waiting on it
  // bounds the wait (a child still starting then is killed at exit, above).
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (d: string): void => {
      seen += d;
      onOut(d);
      if (/listening on http:\/\//.test(seen)) resolve(child);
    };
    child.stdout!.setEncoding("utf8").on("data", onData);
    child.stderr!.setEncoding("utf8").on("data", onData);
    child.once("exit", (code, signal) => {
      reject(new Error(`tracepipe serve on port ${port} exited (${code ?? signal}) before listening: ${seen}`));
    });
  });
}

/**
 * Starts `n` collectors with the same arguments (typically `--store postgres://...`
 * and `--no-rate-limit`), each on its own fixed loopback port, in parallel;
 * `cli` runs another tree's CLI (a benchmark's baseline) instead of this one's.
 */
export async function startServeChildren(
  n: number,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  cli: readonly string[] = CLI,
): Promise<ServeChild[]> {
  killAllAtExit();
  return Promise.all(
    Array.from({ length: n }, async () => {
      const port = await freePort();
      let out = "";
      let child = await launch(port, args, env, (d) => (out += d), cli);
      const handle: ServeChild = {
        url: `http://127.0.0.1:${port}`,
        port,
        output: () => out,
        pid: () => child.pid,
        alive: () => child.exitCode === null && child.signalCode === null,
        kill: (signal = "SIGTERM") =>
          new Promise<void>((resolve) => {
            if (!handle.alive()) return resolve();
            child.once("exit", () => resolve());
            child.kill(signal);
          }),
        restart: async () => {
          await handle.kill("SIGKILL");
          out = "";
          child = await launch(port, args, env, (d) => (out += d), cli);
        },
      };
      return handle;
    }),
  );
}

/** Stops every child (SIGTERM, then SIGKILL after `graceMs`). */
export async function stopServeChildren(children: readonly ServeChild[], graceMs = 5_000): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      const timer = setTimeout(() => void c.kill("SIGKILL"), graceMs);
      await c.kill("SIGTERM");
      clearTimeout(timer);
    }),
  );
}
