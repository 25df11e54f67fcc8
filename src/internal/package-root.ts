/**
 * The folder of tracepipe's own package.json, found by climbing from this
 * module: from the sources this is src/internal, and from a build it is a chunk
 * whose depth under dist/ is the bundler's choice, so no fixed `../..` holds.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let found: { dir: string; version: string } | null | undefined;

function find(): { dir: string; version: string } | null {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "tracepipe") return { dir, version: pkg.version ?? "unknown" };
    } catch {
      // no package.json at this level: keep climbing
    }
    if (dirname(dir) === dir) return null;
  }
}

/** The package's root folder, or undefined when this code runs outside its package (bundled into an app). */
export function packageRoot(): string | undefined {
  if (found === undefined) found = find();
  return found?.dir;
}

/** The package's version, or "unknown" outside its package. */
export function packageVersion(): string {
  if (found === undefined) found = find();
  return found?.version ?? "unknown";
}
