/**
 * The store conformance suite on the SQLite store: a real file per test,
 * opened through openStore as the collector opens it.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/store/index.js";
import { tempDir } from "../helpers/runs.js";
import { describeStoreContract } from "./conformance.js";

describeStoreContract("SQLite", async (opts) => {
  const dir = tempDir("tp-store-contract-");
  const store = await openStore(join(dir, "traces.db"), opts);
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
