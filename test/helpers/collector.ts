import { CLI } from "./cli.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createCollector, type Collector, type CollectorOptions } from "../../src/server/app.js";
import { sharedPostgres, type PostgresDatabases } from "./postgres.js";

export interface Running {
  collector: Collector;
  url: string;
  dbPath: string;
  close(): Promise<void>;
}

/**
 * The store end-to-end tests run on when the test project says so
 * (vitest.config.ts: TRACEPIPE_TEST_STORE=postgres runs some files again over
 * PostgreSQL): a migrated database on the run's shared cluster per collector.
 */
let cluster: Promise<PostgresDatabases> | undefined;
async function testStoreUrl(): Promise<string | undefined> {
  if (process.env.TRACEPIPE_TEST_STORE !== "postgres") return undefined;
  return (await (cluster ??= sharedPostgres())).migratedDatabase();
}

/** A real collector on a loopback port with a temp SQLite file (or, in the PostgreSQL test project, a fresh PostgreSQL database). */
export async function startCollector(opts: CollectorOptions = {}): Promise<Running> {
  const dbPath = typeof opts.db === "string" ? opts.db : join(mkdtempSync(join(tmpdir(), "tp-collector-")), "traces.db");
  const collector = await createCollector({ rateLimits: false, ...opts, db: opts.db ?? (await testStoreUrl()) ?? dbPath });
  const { url } = await collector.listen(0, "127.0.0.1");
  return { collector, url, dbPath, close: () => collector.close() };
}

export { runRecord, testId } from "./runs.js";

/** A multipart body as the client sends it, encoded by undici's FormData (not by hand). */
export function multipart(parts: { post?: Record<string, unknown>[]; patch?: Record<string, unknown>[] }): FormData {
  const fd = new FormData();
  for (const kind of ["post", "patch"] as const) {
    for (const run of parts[kind] ?? []) {
      const { inputs, outputs, events, extra, error, serialized, ...rest } = run;
      const id = run.id as string;
      fd.append(`${kind}.${id}`, new Blob([JSON.stringify(rest)], { type: "application/json" }));
      for (const [k, v] of Object.entries({ inputs, outputs, events, extra, error, serialized })) {
        if (v !== undefined) fd.append(`${kind}.${id}.${k}`, new Blob([JSON.stringify(v)], { type: "application/json" }));
      }
    }
  }
  return fd;
}

export interface ServeProcess {
  url: string;
  dbPath: string;
  /** Runs in a project, and distinct ids among them, read from the SQLite file. */
  count(project: string): { n: number; d: number };
  /** All the process has printed so far, stdout and stderr. */
  output(): string;
  close(): Promise<void>;
}

/**
 * `tracepipe serve` in its own process: where a test measures arrival times,
 * the collector's synchronous SQLite work must not stall the measuring loop.
 */
export async function startServeProcess(extraArgs: string[] = ["--no-rate-limit"]): Promise<ServeProcess> {
  const { spawn } = await import("node:child_process");
  // better-sqlite3 is imported at the top of this file; the serve process holds its own connection.
  const dbPath = join(mkdtempSync(join(tmpdir(), "tp-serve-")), "traces.db");
  const child = spawn(process.execPath, [...CLI, "serve", "--port", "0", "--db", dbPath, ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  // A test that gives up waiting (its own time is the bound: a start on a busy machine has no fixed
  // deadline) leaves no collector behind.
  const killAtExit = () => child.kill("SIGKILL");
  process.once("exit", killAtExit);
  child.once("exit", () => process.off("exit", killAtExit));
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: string) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.setEncoding("utf8").on("data", onData);
    child.stderr!.setEncoding("utf8").on("data", onData);
    child.once("exit", (code) => reject(new Error(`tracepipe serve exited (${code}): ${out}`)));
  });
  let db: InstanceType<typeof Database> | undefined;
  return {
    url,
    dbPath,
    output: () => out,
    count(project) {
      db ??= new Database(dbPath, { readonly: true });
      return db.prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM runs WHERE session_name = ?").get(project) as {
        n: number;
        d: number;
      };
    },
    close: () =>
      new Promise((r) => {
        db?.close();
        if (child.exitCode !== null) return r();
        child.once("exit", () => r());
        child.kill("SIGTERM");
      }),
  };
}

/** A read-only SQL connection to a store's file, for tests that count rows the store's API does not expose. */
const sqlConnections = new Map<string, InstanceType<typeof Database>>();
export function sql(store: { target: string }): InstanceType<typeof Database> {
  let db = sqlConnections.get(store.target);
  if (!db) sqlConnections.set(store.target, (db = new Database(store.target, { readonly: true })));
  return db;
}
