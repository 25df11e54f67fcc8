import { afterEach, describe, expect, it, vi } from "vitest";
import { onCi, skipWithout } from "../helpers/services.js";

afterEach(() => vi.restoreAllMocks());

describe("tests that need a system service", () => {
  it("are skipped with a notice when it is missing and CI is not set", () => {
    const notices: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((s) => (notices.push(String(s)), true));
    expect(skipWithout("tracepipe-no-such-service", "install it", {})).toBe(true);
    expect(notices.join("")).toMatch(
      /NOTICE: tracepipe-no-such-service is not installed.*SKIPPED \(install it; with CI=true they fail instead\)/,
    );
  });

  it("run (and so fail in set-up) when it is missing under CI, and run when it is installed", () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    expect(skipWithout("tracepipe-no-such-service", "install it", { CI: "true" })).toBe(false);
    expect(skipWithout("node", "install it", {})).toBe(false);
    expect(write).not.toHaveBeenCalled();
  });

  it("read CI as set unless it is empty, 0 or false", () => {
    expect([undefined, "", "0", "false", "FALSE", "true", "1", "yes"].map((CI) => onCi({ CI }))).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
  });
});
