/**
 * The store conformance suite on the PostgreSQL store: the run's shared
 * cluster, a new database per test (a copy of one the store's migrations
 * made), opened through openStore as the collector opens a `postgres://`
 * target. Skipped with a notice where PostgreSQL is not installed (a failure
 * under CI).
 */
import { beforeAll, describe } from "vitest";
import { openStore } from "../../src/store/index.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { describeStoreContract } from "./conformance.js";

const skip = skipWithoutPostgres();

describe.skipIf(skip)("PostgreSQL", () => {
  let cluster: PostgresDatabases;
  beforeAll(async () => {
    cluster = await sharedPostgres();
  }, 120_000);

  describeStoreContract("PostgreSQL", async (opts) => {
    const store = await openStore(await cluster.migratedDatabase(), opts);
    return { store, cleanup: () => store.close() };
  });
});
