/**
 * The PostgreSQL store's pool (store/postgres/pool.ts) when the server ends a
 * connection that is checked out but between two of its queries: the
 * connection's error must not be thrown out of the process (pg-pool listens
 * only while a connection is idle), and the store goes on with a new connection.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";

const skip = skipWithoutPostgres();

describe.skipIf(skip)("PostgreSQL store: a checked-out connection the server ends", () => {
  let pg: PostgresDatabases;
  beforeAll(async () => {
    pg = await sharedPostgres();
  }, 120_000);

  it("is dropped without an uncaught error, and the next statements use a new connection", async () => {
    const store = await PostgresStore.open(await pg.database());
    try {
      let ended = 0;
      const dropped = await store.pool.withClient(async (c) => {
        const pid = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
        const gone = new Promise((resolve) => c.once("end", resolve));
        // Another connection ends this one while it is held and idle: the server's FATAL, then the socket's end.
        const killed = await store.pool.query<{ ok: boolean }>("SELECT pg_terminate_backend($1) AS ok", [pid]);
        expect(killed.rows[0]!.ok).toBe(true);
        await gone;
        ended++;
        return pid;
      });
      expect(ended).toBe(1);
      const now = (await store.pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      expect(now).not.toBe(dropped);
      expect(await store.health()).toEqual({ ok: true });
    } finally {
      await store.close();
    }
  });
});
