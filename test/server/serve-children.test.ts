import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { runRecord } from "../helpers/runs.js";
import { startServeChildren, stopServeChildren, type ServeChild } from "../helpers/serve-processes.js";

// The harness the multi-collector tests stand on: several `serve` processes on one
// PostgreSQL, one killed without warning and started again on the same port.
describe.skipIf(skipWithoutPostgres())("serve children on one PostgreSQL", () => {
  let pg: PostgresDatabases;
  let children: ServeChild[] = [];
  beforeAll(async () => {
    pg = await sharedPostgres();
    children = await startServeChildren(2, ["--store", await pg.database(), "--no-rate-limit"]);
  });
  afterAll(async () => {
    await stopServeChildren(children);
  });

  it("answers on every port, comes back on the same port after SIGKILL, and shares one store", async () => {
    const [a, b] = children as [ServeChild, ServeChild];
    expect(new Set(children.map((c) => c.port)).size).toBe(2);
    const run = runRecord({ name: "shared", session_name: "harness" });
    const id = run.id as string;
    const post = await fetch(`${a.url}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(run),
    });
    expect(post.status).toBeLessThan(300);
    await a.kill("SIGKILL");
    expect(a.alive()).toBe(false);
    await expect(fetch(`${a.url}/info`)).rejects.toThrow();
    await a.restart();
    expect(a.alive()).toBe(true);
    for (const c of [a, b]) {
      const r = await fetch(`${c.url}/runs/${id}`);
      expect(r.status).toBe(200);
      expect(((await r.json()) as { name: string }).name).toBe("shared");
    }
  });
});
