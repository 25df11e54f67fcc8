/**
 * Throwaway PostgreSQL 15 clusters (Debian's `postgresql`; `.ci/run` installs
 * it) for the tests of the PostgreSQL store: `initdb` into a fresh directory,
 * `pg_ctl start` on a free loopback port with fsync off, and a new database per
 * test (`database()`). Most files share one cluster per vitest run
 * (`sharedPostgres()`); a file that stops and starts the server has its own
 * (`startPostgres()`), stopped and removed at the end, or at process exit when
 * the file dies first. Without PostgreSQL the tests skip
 * with a notice (`skipWithoutPostgres()`), and fail under CI.
 *
 * The server refuses to run as root: when the tests run as root, every
 * command runs as the `postgres` user, in a directory that user owns.
 */
import { execFile, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
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

/** A cluster on disk and running: where it lives, and how to stop it without this process's exit hook. */
interface Launched {
  root: string;
  data: string;
  port: number;
  opts(): string;
  readLog(): string;
}

/** `initdb` into a fresh directory under the temp root and start it on a free loopback port. */
async function launch(maxConnections: number, settings: Readonly<Record<string, string>> = {}): Promise<Launched> {
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
    `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=${maxConnections}${Object.entries(
      settings,
    )
      .map(([k, v]) => ` -c ${k}=${v}`)
      .join("")}`;
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
    const r = pgRun("pg_ctl", ["-D", data, "-o", opts(), "-l", join(root, "server.log"), "-w", "-t", "60", "start"], root);
    if (r.ok) break;
    if (attempt >= 3) {
      rmSync(root, { recursive: true, force: true });
      throw new Error(`pg_ctl start failed: ${r.out.slice(-1000)}\n${readLog()}`);
    }
  }
  return { root, data, port, opts, readLog };
}

/** Stop a cluster (`pg_ctl -m fast stop`, else SIGQUIT to the postmaster) and remove its files. */
function stopAndRemove(root: string): void {
  const data = join(root, "data");
  const r = pgRun("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"], root);
  if (!r.ok) {
    // pg_ctl could not stop it: SIGQUIT to the postmaster (immediate shutdown).
    try {
      const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      if (pid > 0) process.kill(pid, "SIGQUIT");
    } catch {
      // not running
    }
  }
  rmSync(root, { recursive: true, force: true });
}

/**
 * `CREATE DATABASE` with a name no other test file on the same cluster picks. By copying the
 * template's files (FILE_COPY) rather than writing each of its blocks to the WAL (the default,
 * WAL_LOG): for databases this small the copy costs the server a fraction of the work.
 */
async function createDatabase(url: string, port: number, counter: { n: number }, template?: string): Promise<string> {
  const name = `t${process.pid}_${++counter.n}_${Math.random().toString(36).slice(2, 8)}`;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""} STRATEGY FILE_COPY`);
  } finally {
    await c.end();
  }
  return `postgres://postgres@127.0.0.1:${port}/${name}`;
}

/**
 * A cluster of this process's own, which a test may stop and start (an outage); stopped at exit whatever ends the tests.
 * `settings`: more server settings (`-c name=value`), e.g. a benchmark's `shared_preload_libraries`.
 */
export async function startPostgres(settings: Readonly<Record<string, string>> = {}): Promise<RunningPostgres> {
  const { root, data, port, opts, readLog } = await launch(200, settings);
  const handle = { stopNow: () => stopAndRemove(root) };
  live.add(handle);
  hookExit();

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const counter = { n: 0 };
  return {
    url,
    port,
    database: () => createDatabase(url, port, counter),
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

/**
 * One cluster for the whole vitest run, shared by every test file that only
 * needs databases of its own (`initdb` and a start cost seconds; a database,
 * milliseconds). The global set-up (postgres-setup.ts) names a meeting
 * directory in SHARED_ENV; the first worker that needs PostgreSQL starts the
 * cluster and writes where it listens there, the others wait for that, and
 * the global teardown stops it. Databases are not dropped one by one (each
 * DROP DATABASE waits for a checkpoint): they go with the cluster. Without
 * the set-up (a file run some other way), this process gets a cluster of its
 * own, stopped at its exit.
 */
export const SHARED_ENV = "TRACEPIPE_TEST_PG_RUN";

export interface PostgresDatabases {
  url: string;
  port: number;
  /** A new, empty database on the cluster; its URL. */
  database(): Promise<string>;
  /**
   * A new database with tracepipe's schema already migrated, as a collector
   * finds it when it restarts: a copy of a template migrated once per run, for
   * the tests of what the store does rather than of how its schema is made.
   */
  migratedDatabase(): Promise<string>;
}

interface SharedCluster {
  url: string;
  port: number;
  root: string;
}

let sharedCluster: Promise<SharedCluster> | undefined;
let sharedTemplate: Promise<string> | undefined;

export function sharedPostgres(): Promise<PostgresDatabases> {
  sharedCluster ??= oncePerRun("cluster", startRunCluster, async () => {
    const own = await startPostgres();
    return { url: own.url, port: own.port, root: "" };
  });
  return sharedCluster.then((cluster) => {
    const { url, port } = cluster;
    const counter = { n: 0 };
    const create = (template?: string) => createDatabase(url, port, counter, template);
    return {
      url,
      port,
      database: () => create(),
      async migratedDatabase() {
        const migrate = () => migratedTemplate(cluster);
        sharedTemplate ??= oncePerRun("template", migrate, migrate);
        return create(await sharedTemplate);
      },
    };
  });
}

const SHARED_MAX_CONNECTIONS = 400;

async function startRunCluster(): Promise<SharedCluster> {
  // Without autovacuum: the run leaves hundreds of small databases behind, and its workers would
  // visit them in turn for as long as the run lasts, vacuuming tables that are thrown away at the
  // end. No test relies on it (the store's own clusters, startPostgres, keep it on).
  const { root, port } = await launch(SHARED_MAX_CONNECTIONS, { autovacuum: "off" });
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, root };
}

/** A database that the store's own migrations brought up to date, to copy with CREATE DATABASE ... TEMPLATE. */
async function migratedTemplate(cluster: SharedCluster): Promise<string> {
  const url = await createDatabase(cluster.url, cluster.port, { n: 0 });
  // Loaded here, not at the top: vitest.config.ts imports this file for skipWithoutPostgres.
  const { openStore } = await import("../../src/store/index.js");
  const store = await openStore(url);
  await store.close();
  return url.slice(url.lastIndexOf("/") + 1);
}

/**
 * `make()` once for the whole run, whichever worker asks first: it records the
 * result in the meeting directory and the others read it from there. Outside
 * a run with the global set-up, `alone()` in this process.
 */
async function oncePerRun<T>(key: string, make: () => Promise<T>, alone: () => Promise<T>): Promise<T> {
  const dir = process.env[SHARED_ENV];
  if (!dir) return alone();
  const done = join(dir, `${key}.json`);
  const failed = join(dir, `${key}.error`);
  let first = false;
  try {
    mkdirSync(join(dir, `${key}.making`));
    first = true;
  } catch {
    // another worker makes it
  }
  if (first) {
    try {
      const made = await make();
      writeFileSync(`${done}.tmp`, JSON.stringify(made));
      renameSync(`${done}.tmp`, done);
      return made;
    } catch (err) {
      writeFileSync(failed, String(err));
      throw err;
    }
  }
  for (const started = Date.now(); ;) {
    if (existsSync(done)) return JSON.parse(readFileSync(done, "utf8")) as T;
    if (existsSync(failed)) throw new Error(`the run's shared PostgreSQL ${key} could not be made: ${readFileSync(failed, "utf8")}`);
    if (Date.now() - started > 120_000) throw new Error(`the run's shared PostgreSQL ${key} was not made within 120 s (${dir})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The global teardown: stop the run's shared cluster, if a worker started one, and remove the meeting directory. */
export function stopRunCluster(dir: string): void {
  const where = join(dir, "cluster.json");
  if (existsSync(where)) stopAndRemove((JSON.parse(readFileSync(where, "utf8")) as SharedCluster).root);
  rmSync(dir, { recursive: true, force: true });
}
