/**
 * Debian's chromium driven by playwright-core through its executable path (no
 * browser download). Without chromium the browser tests skip with a visible
 * notice, except under CI=true, where a missing browser is a failure.
 */
import { onCi } from "../helpers/services.js";
import { existsSync, mkdirSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

// CHROMIUM_PATH, when set, is the only place looked at.
const CANDIDATES = process.env.CHROMIUM_PATH
  ? [process.env.CHROMIUM_PATH]
  : ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium"];

export const chromiumPath: string | undefined = CANDIDATES.find((p) => existsSync(p));

if (!chromiumPath) {
  const msg = `browser tests: no chromium found (looked at ${CANDIDATES.join(", ")}); install Debian's chromium or set CHROMIUM_PATH`;
  if (onCi()) throw new Error(msg); // the same rule as every system service (test/helpers/services.ts)
  console.warn(`\n*** SKIPPED: ${msg} ***\n`);
}

export async function launch(): Promise<Browser> {
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  return chromium.launch({ executablePath: chromiumPath!, args: root ? ["--no-sandbox"] : [], headless: true });
}

/** Screenshots go to test-output/viewer/ (git-ignored). */
export function screenshotPath(name: string): string {
  const dir = new URL("../../test-output/viewer/", import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  return dir + name;
}
