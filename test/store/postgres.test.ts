/**
 * The store conformance suite on the PostgreSQL store: one throwaway cluster
 * for this file, a new database per test, opened through openStore as the
 * collector opens a `postgres://` target. Skipped with a notice where
 * PostgreSQL is not installed (a failure under CI).
 */
import { afterAll, beforeAll, describe } from "vitest";
import { openStore } from "../../src/store/index.js";
import { skipWithoutPostgres, startPostgres, type RunningPostgres } from "../helpers/postgres.js";
import { describeStoreContract } from "./conformance.js";

const skip = skipWithoutPostgres();

describe.skipIf(skip)("PostgreSQL", () => {
  let cluster: RunningPostgres;
  beforeAll(async () => {
    cluster = await startPostgres();
  }, 120_000);
  // Stopping and removing a cluster that holds a database per test takes a while on a busy machine.
  afterAll(async () => {
    await cluster?.close();
  }, 180_000);

  describeStoreContract("PostgreSQL", async (opts) => {
    const store = await openStore(await cluster.database(), opts);
    return { store, cleanup: () => store.close() };
  });
});
