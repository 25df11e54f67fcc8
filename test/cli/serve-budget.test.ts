/**
 * `serve --large-body-budget-bytes` (and TRACEPIPE_LARGE_BODY_BUDGET_BYTES)
 * reach the collector: with a budget smaller than one large body, a second
 * large body waits until the first is done; with the default budget it does
 * not. A bad value in the variable stops `serve` with the variable named.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { largeBodyBudget } from "../../src/cli/serve.js";
import { CLI, runCli } from "../helpers/cli.js";
import { runRecord } from "../helpers/collector.js";

const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null) continue;
    c.kill("SIGTERM");
    await new Promise((r) => c.once("exit", r));
  }
});

function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const db = join(mkdtempSync(join(tmpdir(), "tp-budget-")), "runs.db");
  const child = spawn(process.execPath, [...CLI, "serve", "--port", "0", "--db", db, "--no-rate-limit", ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      seen += d;
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
}

/** A run whose JSON is about `bytes` long (large bodies start at 1 MiB). */
function bigRun(bytes: number): string {
  return JSON.stringify(runRecord({ inputs: { text: "x".repeat(bytes) } }));
}

/** POST /runs whose body is sent in two halves; the second only when `finish` is called. */
function heldPost(url: string, body: string): { finish: () => void; status: Promise<number> } {
  const bytes = Buffer.from(body);
  const half = bytes.length >> 1;
  let finish = () => undefined as void;
  const status = new Promise<number>((resolve, reject) => {
    const req = request(
      `${url}/runs`,
      { method: "POST", headers: { "content-type": "application/json", "content-length": bytes.length } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.write(bytes.subarray(0, half));
    finish = () => req.end(bytes.subarray(half));
  });
  return { finish, status };
}

async function post(url: string, body: string): Promise<number> {
  const res = await fetch(`${url}/runs`, { method: "POST", headers: { "content-type": "application/json" }, body });
  await res.text();
  return res.status;
}

/** Whether `p` settles within `ms` (a liveness probe, not a speed measurement). */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([p.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  clearTimeout(timer);
  return done;
}

describe("serve's large-body budget", () => {
  it("reads the flag, else the variable, and refuses a bad variable by name", () => {
    expect(largeBodyBudget(5, { TRACEPIPE_LARGE_BODY_BUDGET_BYTES: "7" })).toBe(5);
    expect(largeBodyBudget(undefined, { TRACEPIPE_LARGE_BODY_BUDGET_BYTES: " 7 " })).toBe(7);
    expect(largeBodyBudget(undefined, { TRACEPIPE_LARGE_BODY_BUDGET_BYTES: "" })).toBeUndefined();
    expect(largeBodyBudget(undefined, {})).toBeUndefined();
    try {
      largeBodyBudget(undefined, { TRACEPIPE_LARGE_BODY_BUDGET_BYTES: "64MB" });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues).toEqual([
        expect.objectContaining({ loc: ["TRACEPIPE_LARGE_BODY_BUDGET_BYTES"], type: "int_parsing" }),
      ]);
    }
  });

  it("a bad TRACEPIPE_LARGE_BODY_BUDGET_BYTES stops serve (exit 2) naming it", async () => {
    const r = await runCli(["serve", "--port", "0", "--db", ":memory:"], { env: { TRACEPIPE_LARGE_BODY_BUDGET_BYTES: "lots" } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("TRACEPIPE_LARGE_BODY_BUDGET_BYTES");
  });

  for (const how of ["flag", "variable"] as const) {
    it(`with a budget below one body (${how}), a second large body waits for the first`, async () => {
      const url =
        how === "flag" ? await serve(["--large-body-budget-bytes", "1"]) : await serve([], { TRACEPIPE_LARGE_BODY_BUDGET_BYTES: "1" });
      const first = heldPost(url, bigRun(3 * 1024 * 1024));
      await new Promise((r) => setTimeout(r, 300)); // the first holds its slot (it is alone, so it runs)
      const second = post(url, bigRun(2 * 1024 * 1024));
      expect(await settlesWithin(second, 1000)).toBe(false);
      first.finish();
      expect(await first.status).toBe(202);
      expect(await second).toBe(202);
    });
  }

  it("with the default budget, the second large body is stored while the first is still being sent", async () => {
    const url = await serve([]);
    const first = heldPost(url, bigRun(3 * 1024 * 1024));
    await new Promise((r) => setTimeout(r, 300));
    expect(await post(url, bigRun(2 * 1024 * 1024))).toBe(202);
    first.finish();
    expect(await first.status).toBe(202);
  });
});
