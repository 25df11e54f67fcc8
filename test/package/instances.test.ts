import { beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { appDir, definitionsOf, ensureBuilt, probeLoads } from "./dist.js";

beforeAll(() => ensureBuilt(), 180_000);

describe("a process that loads several entries of the built package", () => {
  it("shares one instance of every module: errors thrown by tracepipe/otel, tracepipe/server and an adapter are the main entry's classes", () => {
    const dir = appDir();
    const app = join(dir, "app.mjs");
    writeFileSync(
      app,
      `import * as tp from "tracepipe";
import { TraceSpanProcessor, createOtlpTraceExporter } from "tracepipe/otel";
import { createCollector, openStore } from "tracepipe/server";
import { openStore as openStoreToo } from "tracepipe/store";
import { normalize as geminiNormalize } from "tracepipe/adapters/gemini";
const caught = (fn) => { try { fn(); } catch (err) { return err; } };
const caughtAsync = async (fn) => { try { await fn(); } catch (err) { return err; } };
const classes = (err) => ["TracepipeError", "ValidationError", "NormalizeError", "ConfigError"].filter((c) => err instanceof tp[c]);
const store = await openStore("traces.db");
const got = {
  processor: classes(caught(() => new TraceSpanProcessor({ filter: "bogus" }))),
  exporter: classes(caught(() => createOtlpTraceExporter({ env: {} }))),
  collector: classes(await caughtAsync(() => createCollector({ db: store, webhooks: { enabled: true } }))),
  adapter: classes(caught(() => geminiNormalize(42))),
  sameOpenStore: openStore === openStoreToo,
};
await store.close();
console.log(JSON.stringify(got));
`,
    );
    const { stdout, files } = probeLoads(dir, app);
    expect(JSON.parse(stdout)).toEqual({
      processor: ["TracepipeError", "ValidationError"],
      exporter: ["TracepipeError", "ValidationError", "ConfigError"],
      collector: ["TracepipeError", "ValidationError", "ConfigError"],
      adapter: ["TracepipeError", "ValidationError", "NormalizeError"],
      sameOpenStore: true,
    });
    // Each class and each stateful module's code is in exactly one of the files this process loaded.
    for (const name of ["TracepipeError", "ConfigError", "NormalizeError", "Client", "getDefaultClient", "getCurrentRun", "openStore"])
      expect(definitionsOf(files, name), name).toBe(1);
  });
});
