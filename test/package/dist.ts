/**
 * The package as users get it: dist/ compiled by `npm run build` (which `npm ci`
 * runs as `prepare`), imported by name from an app directory whose
 * node_modules/tracepipe points at this checkout.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { tempDir } from "../helpers/runs.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Written last by scripts/build.mjs, so a stamp newer than the sources means a complete, current dist/. */
const STAMP = join(ROOT, "dist/.build-stamp");
const LOCK = join(tmpdir(), `tracepipe-build-${createHash("sha256").update(ROOT).digest("hex").slice(0, 12)}.lock`);

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

function fresh(): boolean {
  try {
    const built = statSync(STAMP).mtimeMs;
    // package.json too, as test/helpers/cli.ts counts it: else a build that cli.ts finds stale would be kept.
    return [
      join(ROOT, "src"),
      join(ROOT, "adapters"),
      join(ROOT, "tsconfig.json"),
      join(ROOT, "tsconfig.build.json"),
      join(ROOT, "package.json"),
      join(ROOT, "scripts/build.mjs"),
    ].every((p) => newestMtime(p) <= built);
  } catch {
    return false;
  }
}

/** Build dist/ unless it is newer than every source; one builder at a time across test workers. */
export function ensureBuilt(): void {
  for (const started = Date.now(); !fresh();) {
    try {
      mkdirSync(LOCK);
    } catch {
      // Another worker is building: wait for it (a lock older than two minutes is a crashed build).
      if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })!.mtimeMs > 120_000) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() - started > 180_000) throw new Error("timed out waiting for another worker's `npm run build`");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
      continue;
    }
    try {
      if (fresh()) return;
      const r = spawnSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT, encoding: "utf8" });
      if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}${r.stderr}`);
      return;
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

/** A fresh app directory where `tracepipe` resolves to this package, as after `npm install tracepipe`. */
export function appDir(type: "module" | "commonjs" = "module"): string {
  const dir = tempDir("tp-app-");
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(ROOT.replace(/\/$/, ""), join(dir, "node_modules", "tracepipe"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type }));
  return dir;
}

/** Third-party packages among loaded file URLs, by name (`@scope/name` or `name`). */
export function packagesOf(files: readonly string[]): string[] {
  const names = new Set<string>();
  for (const f of files) {
    const m = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f);
    if (m) names.add(m[1]!);
  }
  return [...names].sort();
}

export interface Loaded {
  exports: string[];
  files: string[];
  packages: string[];
}

/**
 * Import `specifier` (a package name, or a file path with program arguments after it)
 * in a fresh node process inside `cwd` and report every file that loaded.
 */
export function probeLoads(cwd: string, specifier: string, args: string[] = []): Loaded & { stdout: string } {
  const out = join(tempDir("tp-probe-"), "loads.txt");
  const r = spawnSync(process.execPath, [join(ROOT, "test/package/probe-loads.mjs"), out, specifier, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, TRACEPIPE_ENDPOINT: "" },
  });
  if (r.status !== 0) throw new Error(`probe of ${specifier} failed (${r.status}):\n${r.stderr}`);
  const { exports, files } = JSON.parse(readFileSync(`${out}.json`, "utf8")) as Loaded;
  return { exports, files, packages: packagesOf(files), stdout: r.stdout };
}

/**
 * How many times the loaded files of the package's dist/ define `name`: as a
 * function, a class, or a binding of one. The build never minifies names
 * (scripts/build.mjs), so code is found by its source name in any chunk; a
 * function whose binding clashed in its chunk is found under the bundler's
 * renaming too (`name` followed by digits), and classes are never renamed.
 */
export function definitionsOf(files: readonly string[], name: string): number {
  const n = name.replace(/[$]/g, "\\$") + "\\d*";
  const marker = new RegExp(
    `\\bfunction\\s*\\*?\\s*${n}\\s*\\(|\\bclass\\s+${n}\\b|(?<![\\w$.])${n}=(?:class\\b|function\\b|async\\b|\\([^()]*\\)=>|[\\w$]+=>)`,
    "g",
  );
  let count = 0;
  for (const f of files) {
    const path = f.startsWith("file:") ? fileURLToPath(f) : f;
    if (!path.startsWith(join(ROOT, "dist") + "/") || !path.endsWith(".js")) continue;
    count += readFileSync(path, "utf8").match(marker)?.length ?? 0;
  }
  return count;
}

/** The package's own dist/ files among loaded file URLs, relative to dist/. */
export function distFilesOf(files: readonly string[]): string[] {
  const dist = pathToFileURL(join(ROOT, "dist")).href + "/";
  return files.filter((f) => f.startsWith(dist)).map((f) => f.slice(dist.length));
}
