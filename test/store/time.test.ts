/** canonicalTime: every spelling of one instant gives one stored form, whatever the process's time zone. */
import { afterEach, describe, expect, it } from "vitest";
import { canonicalTime } from "../../src/store/time.js";

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe("canonicalTime", () => {
  it("reads a time without an offset as UTC, with or without its seconds, in any time zone", () => {
    for (const tz of ["UTC", "America/New_York", "Asia/Kolkata"]) {
      process.env.TZ = tz;
      expect(canonicalTime("2026-11-20T10:00"), tz).toBe("2026-11-20T10:00:00.000000Z");
      expect(canonicalTime("2026-11-20 10:00"), tz).toBe("2026-11-20T10:00:00.000000Z");
      expect(canonicalTime("2026-11-20T10:00:00"), tz).toBe("2026-11-20T10:00:00.000000Z");
      expect(canonicalTime("2026-11-20"), tz).toBe("2026-11-20T00:00:00.000000Z");
    }
  });

  it("keeps microseconds and converts offsets", () => {
    expect(canonicalTime("2026-11-20T10:00:00.123456Z")).toBe("2026-11-20T10:00:00.123456Z");
    expect(canonicalTime("2026-11-20T10:00:00.1234567Z")).toBe("2026-11-20T10:00:00.123456Z");
    expect(canonicalTime("2026-11-20T10:00:00.123456+02:00")).toBe("2026-11-20T08:00:00.123456Z");
    expect(canonicalTime("2026-11-20T10:00+0530")).toBe("2026-11-20T04:30:00.000000Z");
    expect(canonicalTime("2026-11-20T10:00z")).toBe("2026-11-20T10:00:00.000000Z");
  });

  it("refuses what names no time", () => {
    for (const v of [
      "yesterday",
      "",
      "2026-11-20T25:99:00Z",
      "2026-02-30T10:00:00Z",
      "2026-02-30",
      "2026-02-30T10:00:00+02:00",
      "2026-13-01T00:00:00",
      "10:00",
    ])
      expect(canonicalTime(v), v).toBeUndefined();
  });
});
