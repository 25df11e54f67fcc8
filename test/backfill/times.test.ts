import { describe, expect, it } from "vitest";
import { toEpochMs } from "../../src/backfill/convert.js";

describe("log times", () => {
  it("takes RFC 3339 date-times (UTC when no offset) and epoch seconds or milliseconds", () => {
    expect(toEpochMs("2025-02-28T10:00:00Z")).toBe(Date.UTC(2025, 1, 28, 10));
    expect(toEpochMs("2025-02-28T10:00:00")).toBe(Date.UTC(2025, 1, 28, 10)); // never the machine's local time
    expect(toEpochMs("2025-02-28 10:00:00+0100")).toBe(Date.UTC(2025, 1, 28, 9));
    expect(toEpochMs(1_700_000_000)).toBe(1_700_000_000_000);
    expect(toEpochMs("1700000000123")).toBe(1_700_000_000_123);
  });

  it("refuses what is not a real date-time instead of rolling it over", () => {
    for (const bad of ["2025-02-30T00:00:00Z", "hello 5", "2025-13-01T00:00:00Z", "2025-01-01T25:00:00Z", ""])
      expect(toEpochMs(bad), bad).toBeUndefined();
  });
});
