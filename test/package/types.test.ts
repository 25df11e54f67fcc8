/**
 * Our declaration files as a strict consumer checks them (`skipLibCheck: false`),
 * installed the way npm installs us: tracepipe plus its dependencies and peers, and
 * none of our devDependencies. The checkout's node_modules has every @types/* package
 * we develop with, so the consumer gets its own node_modules of links to just the
 * installed closure, and `preserveSymlinks` keeps resolution inside it.
 */
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "../helpers/runs.js";
import { ensureBuilt, ROOT } from "./dist.js";

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  exports: Record<string, unknown>;
}

const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
const depsOf = (m: Manifest) => Object.keys({ ...m.dependencies, ...m.optionalDependencies, ...m.peerDependencies });

/** What `npm install tracepipe` (with the optional OpenTelemetry peers) puts in node_modules: the hoisted closure. */
export function installedClosure(): string[] {
  const seen = new Set<string>();
  const queue = depsOf(manifest(ROOT));
  while (queue.length) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    const dir = join(ROOT, "node_modules", name);
    if (!existsSync(join(dir, "package.json"))) continue; // an optional peer nobody installed
    seen.add(name);
    queue.push(...depsOf(manifest(dir)));
  }
  return [...seen].sort();
}

/** A consumer app whose node_modules holds tracepipe, its installed closure and @types/node, nothing else. */
function consumerApp(): string {
  const dir = tempDir("tp-types-");
  const nm = join(dir, "node_modules");
  const pkg = join(nm, "tracepipe");
  mkdirSync(pkg, { recursive: true });
  for (const entry of ["package.json", "dist", "schema"]) symlinkSync(join(ROOT, entry), join(pkg, entry));
  for (const name of [...installedClosure(), "@types/node", "undici-types"]) {
    if (existsSync(join(nm, name)) || !existsSync(join(ROOT, "node_modules", name))) continue;
    mkdirSync(dirname(join(nm, name)), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", name), join(nm, name), "dir");
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  return dir;
}

function tsc(cwd: string, config: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", config], { cwd });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe("declaration files for a strict consumer", () => {
  it("leave out our devDependencies: the consumer's closure has no @types for better-sqlite3", () => {
    const closure = installedClosure();
    expect(closure).toEqual(expect.arrayContaining(["zod", "commander", "better-sqlite3"]));
    expect(closure).not.toContain("@types/better-sqlite3");
  });

  it("compile with skipLibCheck false and strict under node10 and nodenext, every entry point imported", async () => {
    ensureBuilt();
    const dir = consumerApp();
    const specifiers = Object.keys(manifest(ROOT).exports)
      .filter((k) => !k.endsWith(".json"))
      .map((k) => (k === "." ? "tracepipe" : `tracepipe/${k.slice(2)}`));
    expect(specifiers).toEqual(
      expect.arrayContaining([
        "tracepipe",
        "tracepipe/otel",
        "tracepipe/server",
        "tracepipe/backfill",
        "tracepipe/control",
        "tracepipe/ratelimit",
        "tracepipe/webhooks",
        "tracepipe/adapters/openai-chat",
      ]),
    );
    const source =
      specifiers.map((s, i) => `import * as m${i} from "${s}";`).join("\n") +
      `\nexport const all = [${specifiers.map((_, i) => `m${i}`).join(", ")}];\n` +
      // Resolved to declarations, not to any: a misuse must be an error.
      `// @ts-expect-error batchSize is a number\nnew m0.Client({ batchSize: "many" });\n`;
    writeFileSync(join(dir, "node10.ts"), source);
    writeFileSync(join(dir, "nodenext.mts"), source);
    // skipDefaultLibCheck: TypeScript's own lib files (lib.dom.d.ts, lib.es5.d.ts) are neither ours nor a
    // dependency's, and checking them is a good part of each program's time; every package's declarations still are.
    const common = {
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      skipDefaultLibCheck: true,
      preserveSymlinks: true,
      types: ["node"],
      target: "es2022",
    };
    writeFileSync(
      join(dir, "tsconfig.node10.json"),
      JSON.stringify({
        compilerOptions: { ...common, module: "commonjs", moduleResolution: "node10", esModuleInterop: true, ignoreDeprecations: "5.0" },
        files: ["node10.ts"],
      }),
    );
    writeFileSync(
      join(dir, "tsconfig.nodenext.json"),
      JSON.stringify({ compilerOptions: { ...common, module: "nodenext", moduleResolution: "nodenext" }, files: ["nodenext.mts"] }),
    );
    const [node10, nodenext] = await Promise.all([tsc(dir, "tsconfig.node10.json"), tsc(dir, "tsconfig.nodenext.json")]);
    expect(node10.out).toBe("");
    expect(node10.code).toBe(0);
    expect(nodenext.out).toBe("");
    expect(nodenext.code).toBe(0);
  }, 240_000);
});
