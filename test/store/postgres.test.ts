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
  afterAll(async () => {
    await cluster?.close();
  });

  describeStoreContract("PostgreSQL", async (opts) => {
    const store = await openStore(await cluster.database(), opts);
    return { store, cleanup: () => store.close() };
  });
});
