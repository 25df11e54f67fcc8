/**
 * `prune` and `runs list` given what a person mistypes: a store path that
 * does not exist, a --since that is not a time. Each is exit 2 naming it,
 * not an answer that looks like a result.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { runCli } from "../helpers/cli.js";
import { rootRun } from "../store/contract/fixtures.js";
import { tempDir } from "../helpers/runs.js";

describe("prune", () => {
  it("refuses a --db that is no store, creating nothing there", async () => {
    const dir = tempDir("tp-prune-");
    const typo = join(dir, "trcaes", "traces.db");
    const r = await runCli(["prune", "--db", typo, "--older-than", "30d"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no trace store at ${typo}`);
    expect(r.stdout).toBe("");
    expect(existsSync(join(dir, "trcaes"))).toBe(false);
  });
});

describe("runs list --since", () => {
  it("refuses a time it cannot read, naming --since, and reads an ISO time", async () => {
    const db = join(tempDir("tp-since-"), "traces.db");
    const store = await openStore(db);
    const run = rootRun({ session_name: "since", start_time: "2026-11-20T10:00:00.000000Z" });
    await store.ingest({ post: [run] });
    await store.close();
    const bad = await runCli(["runs", "--db", db, "list", "--since", "yesterday", "--json"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--since must be a time");
    const good = await runCli(["runs", "--db", db, "list", "--since", "2026-11-20", "--json"]);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain(run.id);
  });
});

describe("runs list --limit", () => {
  it("refuses more than a page holds, as the collector's API does, instead of quietly returning fewer", async () => {
    const db = join(tempDir("tp-limit-"), "traces.db");
    await (await openStore(db)).close();
    const over = await runCli(["runs", "--db", db, "list", "--limit", "600", "--json"]);
    expect(over.code).toBe(2);
    expect(over.stderr).toContain("--limit must be at most 500");
    expect((await runCli(["runs", "--db", db, "list", "--limit", "500", "--json"])).code).toBe(0);
  });
});
