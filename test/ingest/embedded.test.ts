import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "../../src/ingest/client.js";
import { openStore } from "../../src/store/index.js";
import { makeRun, tempDir } from "../helpers/runs.js";

describe("the embedded store", () => {
  it("says once where runs are stored when no endpoint is configured", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    const dbPath = join(tempDir("tp-embedded-"), "traces.db");
    try {
      for (let round = 0; round < 2; round++) {
        const client = new Client({ dbPath, spoolDir: join(dbPath, "..", "spool"), exitHooks: false });
        for (let i = 0; i < 3; i++) client.createRun(makeRun("where"));
        await client.shutdown();
      }
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    } finally {
      process.off("warning", onWarning);
    }
    const notices = warnings.filter((m) => m.includes("no endpoint configured"));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(dbPath);
    expect(notices[0]).toContain("tracepipe serve --db");
    const store = await openStore(dbPath);
    expect(await store.countRuns("where")).toBe(6);
    store.close();
  });
});
