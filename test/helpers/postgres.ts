/**
 * A throwaway PostgreSQL 15 cluster (Debian's `postgresql`; `.ci/run` installs
 * it) for the tests of the PostgreSQL store: `initdb` into a fresh directory,
 * `pg_ctl start` on a free loopback port with fsync off, a new database per
 * test (`database()`), and the cluster stopped and removed at the end, or at
 * process exit when a test file dies first. Without PostgreSQL the tests skip
 * with a notice (`skipWithoutPostgres()`), and fail under CI.
 *
 * The server refuses to run as root: when the tests run as root, every
 * command runs as the `postgres` user, in a directory that user owns.
 */
import { execFile, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { onCi } from "./services.js";

export const PG_BIN = process.env.TRACEPIPE_PG_BIN ?? "/usr/lib/postgresql/15/bin";
export const POSTGRES_HINT = "`apt-get install postgresql` (Debian's PostgreSQL 15); .ci/run does this";

/** True when the PostgreSQL tests should be skipped (announced on stderr); under CI never. */
export function skipWithoutPostgres(env: NodeJS.ProcessEnv = process.env): boolean {
  if (existsSync(join(PG_BIN, "initdb")) && existsSync(join(PG_BIN, "pg_ctl"))) return false;
  if (onCi(env)) return false; // run, and fail in set-up with the hint
  process.stderr.write(
    `\n  NOTICE: PostgreSQL (${PG_BIN}/initdb) is not installed, so the tests that need it are SKIPPED (${POSTGRES_HINT}; with CI=true they fail instead).\n\n`,
  );
  return true;
}

export interface RunningPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  port: number;
  /** A new, empty database on this cluster; its URL. */
  database(): Promise<string>;
  /** `pg_ctl -m fast stop`, without blocking this process's event loop (the cluster stays on disk; `start()` brings it back on the same port). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stop and remove the cluster. */
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

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL program (as `postgres` when we are root), from a directory that user can read. */
function pgRun(program: string, args: string[], cwd: string): { ok: boolean; out: string } {
  const cmd = asRoot ? "runuser" : join(PG_BIN, program);
  const argv = asRoot ? ["-u", "postgres", "--", join(PG_BIN, program), ...args] : args;
  const r = spawnSync(cmd, argv, { cwd, encoding: "utf8", timeout: 60_000 });
  return { ok: !r.error && r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

/** pgRun without blocking the event loop (an outage test's collector keeps answering meanwhile). */
function pgRunAsync(program: string, args: string[], cwd: string): Promise<{ ok: boolean; out: string }> {
  const cmd = asRoot ? "runuser" : join(PG_BIN, program);
  const argv = asRoot ? ["-u", "postgres", "--", join(PG_BIN, program), ...args] : args;
  return new Promise((resolve) => {
    execFile(cmd, argv, { cwd, encoding: "utf8", timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ ok: !err, out: `${stdout}${stderr}${err ? String(err) : ""}` }),
    );
  });
}

/** The owner of the cluster's files: `postgres` when we are root, else ourselves. */
function chownToPostgres(path: string): void {
  if (!asRoot) return;
  const r = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const g = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`there is no postgres user to run the server as: ${POSTGRES_HINT}`);
  chownSync(path, Number(r.stdout.trim()), Number(g.stdout.trim()));
}

/** Clusters this process started and has not stopped: stopped at exit, whatever ends the tests. */
const live = new Set<{ stopNow(): void }>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once("exit", () => {
    for (const c of live) c.stopNow();
  });
}

export async function startPostgres(): Promise<RunningPostgres> {
  if (!existsSync(join(PG_BIN, "initdb"))) throw new Error(`PostgreSQL is not installed at ${PG_BIN}: ${POSTGRES_HINT}`);
  // Directly under the temp root (mkdtemp's 0700 directories would keep `postgres` out), owned by it.
  const root = join(tmpdir(), `tracepipe-pg-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(root, { mode: 0o700 });
  chownToPostgres(root);
  const data = join(root, "data");
  const sockets = join(root, "sockets");
  const init = pgRun("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-N", "-E", "UTF8", "--locale=C"], root);
  if (!init.ok) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.out.slice(-1000)}`);
  }
  mkdirSync(sockets);
  chmodSync(sockets, 0o700);
  chownToPostgres(sockets);

  let port = 0;
  const opts = () =>
    `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = (): void => {
    const r = pgRun("pg_ctl", ["-D", data, "-o", opts(), "-l", join(root, "server.log"), "-w", "-t", "60", "start"], root);
    if (!r.ok) throw new Error(`pg_ctl start failed: ${r.out.slice(-1000)}\n${readLog()}`);
  };
  const readLog = () => {
    try {
      return readFileSync(join(root, "server.log"), "utf8").slice(-2000);
    } catch {
      return "";
    }
  };
  // A free port can be taken between the probe and the bind; try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      start();
      break;
    } catch (err) {
      if (attempt >= 3) {
        rmSync(root, { recursive: true, force: true });
        throw err;
      }
    }
  }

  const stopNow = (): void => {
    const r = pgRun("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"], root);
    if (r.ok) return;
    // pg_ctl could not stop it: SIGQUIT to the postmaster (immediate shutdown).
    try {
      const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      if (pid > 0) process.kill(pid, "SIGQUIT");
    } catch {
      // not running
    }
  };
  const handle = {
    stopNow: () => {
      stopNow();
      rmSync(root, { recursive: true, force: true });
    },
  };
  live.add(handle);
  hookExit();

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let n = 0;
  return {
    url,
    port,
    async database() {
      const name = `t${++n}_${Math.random().toString(36).slice(2, 8)}`;
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      const r = await pgRunAsync("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"], root);
      if (!r.ok) throw new Error(`pg_ctl stop failed: ${r.out.slice(-1000)}`);
    },
    async start() {
      const r = await pgRunAsync("pg_ctl", ["-D", data, "-o", opts(), "-l", join(root, "server.log"), "-w", "-t", "60", "start"], root);
      if (!r.ok) throw new Error(`pg_ctl start failed: ${r.out.slice(-1000)}\n${readLog()}`);
    },
    async close() {
      live.delete(handle);
      handle.stopNow();
    },
  };
}
