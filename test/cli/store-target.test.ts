/**
 * Where a command stores: `--store` (a PostgreSQL URL or a path), else `--db`,
 * else TRACEPIPE_STORE_URL, else TRACEPIPE_DB, else the default file; and the
 * durations `--retention` and `prune --older-than` take.
 */
import { InvalidArgumentError } from "commander";
import { describe, expect, it } from "vitest";
import { parseDuration } from "../../src/cli/duration.js";
import { DEFAULT_DB_PATH, isStoreUrl, storeTargetFrom } from "../../src/env.js";
import { resolveOptions } from "../../src/ingest/config.js";

describe("the store a command uses", () => {
  const url = "postgres://u:p@db:5432/traces";
  it("takes a flag over a variable, --store over --db, and the URL variable over the file one", () => {
    expect(storeTargetFrom({}, {})).toBe(DEFAULT_DB_PATH);
    expect(storeTargetFrom({}, { TRACEPIPE_DB: "/data/t.db" })).toBe("/data/t.db");
    expect(storeTargetFrom({}, { TRACEPIPE_DB: "/data/t.db", TRACEPIPE_STORE_URL: url })).toBe(url);
    expect(storeTargetFrom({ db: "mine.db" }, { TRACEPIPE_STORE_URL: url })).toBe("mine.db");
    expect(storeTargetFrom({ store: url, db: "mine.db" }, {})).toBe(url);
    expect(storeTargetFrom({}, { TRACEPIPE_STORE_URL: " ", TRACEPIPE_DB: "x.db" })).toBe("x.db");
  });

  it("tells a PostgreSQL URL from a file path", () => {
    expect(isStoreUrl(url)).toBe(true);
    expect(isStoreUrl("postgresql://db/traces")).toBe(true);
    expect(isStoreUrl("PostgreSQL://db/traces")).toBe(true);
    expect(isStoreUrl("./postgres/traces.db")).toBe(false);
    expect(isStoreUrl(":memory:")).toBe(false);
  });

  it("sends the Client's embedded runs to TRACEPIPE_STORE_URL, unless a dbPath is given", () => {
    expect(resolveOptions({}, { TRACEPIPE_STORE_URL: url }).storeTarget).toBe(url);
    expect(resolveOptions({ dbPath: "a.db" }, { TRACEPIPE_STORE_URL: url }).storeTarget).toBe("a.db");
    expect(resolveOptions({ storeUrl: url, dbPath: "a.db" }, {}).storeTarget).toBe(url);
    expect(resolveOptions({}, {}).storeTarget).toBe(DEFAULT_DB_PATH);
  });
});

describe("durations", () => {
  const parse = parseDuration("--retention");
  it("reads minutes, hours, days and weeks", () => {
    expect(parse("30d")).toBe(30 * 86_400_000);
    expect(parse("12h")).toBe(12 * 3_600_000);
    expect(parse("90m")).toBe(90 * 60_000);
    expect(parse("2W")).toBe(14 * 86_400_000);
  });
  it("refuses anything else, naming the option", () => {
    for (const bad of ["30", "0d", "-1d", "1.5d", "30 days", "", "1y"]) {
      expect(() => parse(bad), bad).toThrow(InvalidArgumentError);
      expect(() => parse(bad), bad).toThrow(/--retention must be a positive whole number/);
    }
  });
});
