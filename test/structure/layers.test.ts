/**
 * Dependencies point one way (DESIGN "Data flow"): every relative import in
 * src/ and adapters/ is checked against the areas its own area may use.
 * Dynamic `import()` counts too: a lazy edge is still an edge.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

const BASE = ["errors", "env", "format"];
/** Area -> the other areas it may import. `cli` may import anything; nothing may import `cli`. */
const ALLOWED: Record<string, string[]> = {
  errors: [],
  env: [],
  format: ["errors"],
  adapters: ["errors", "format"],
  // tokens reads TRACEPIPE_PRICES (prices/index.ts).
  tokens: ["errors", "env", "format"],
  normalize: ["errors", "format", "adapters"],
  run: [...BASE, "adapters", "normalize", "tokens"],
  ratelimit: ["errors", "env"],
  store: [...BASE, "run", "normalize"],
  ingest: [...BASE, "run", "store", "ratelimit", "tokens"],
  tracing: [...BASE, "adapters", "run", "ingest", "tokens"],
  otel: [...BASE, "adapters", "run", "ingest", "ratelimit", "tokens"],
  backfill: [...BASE, "adapters", "normalize", "run", "ingest", "ratelimit", "tokens", "otel", "store"],
  webhooks: [...BASE, "run", "ingest", "ratelimit"],
  // tracepipe/control is one entry point for deployments and webhooks: its index re-exports webhooks/.
  control: [...BASE, "run", "ratelimit", "webhooks", "store"],
  server: [...BASE, "adapters", "normalize", "run", "store", "otel", "ratelimit", "control", "webhooks", "ingest"],
  index: [...BASE, "adapters", "normalize", "run", "tokens", "tracing", "ingest", "ratelimit", "otel", "backfill", "control", "webhooks", "server", "store"],
};

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (p.endsWith(".ts")) out.push(p);
  }
  return out;
}

function areaOf(file: string): string {
  const parts = relative(ROOT, file).split(sep);
  if (parts[0] === "adapters") return "adapters";
  if (parts.length === 2) return parts[1]!.replace(/\.(ts|js)$/, "");
  return parts[1]!;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"(\.[^"]+)"/g;
/** Imports of a package (not a relative path), static, type-only or dynamic. */
const PACKAGE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"([^".][^"]*)"/g;
/** The database drivers: only the store's implementations open a database (DESIGN "Layout": store/). */
const DATABASE_DRIVERS = new Set(["better-sqlite3", "pg", "pg-pool", "pg-cursor", "postgres"]);

describe("layers", () => {
  it("has no import that runs up a layer", () => {
    const wrong: string[] = [];
    for (const file of [...files(join(ROOT, "src")), ...files(join(ROOT, "adapters"))]) {
      const from = areaOf(file);
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(IMPORT)) {
        const to = areaOf(normalize(join(dirname(file), m[1]!)));
        if (to === from || from === "cli") continue;
        const allowed = ALLOWED[from];
        if (!allowed) wrong.push(`${relative(ROOT, file)}: area "${from}" is not in the layer table`);
        else if (to === "cli" || !allowed.includes(to)) wrong.push(`${relative(ROOT, file)} imports ${m[1]} (${from} -> ${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("has nothing but store/ open a database: no database driver imported anywhere else", () => {
    const wrong: string[] = [];
    for (const file of [...files(join(ROOT, "src")), ...files(join(ROOT, "adapters"))]) {
      if (areaOf(file) === "store") continue;
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(PACKAGE_IMPORT)) if (DATABASE_DRIVERS.has(m[1]!)) wrong.push(`${relative(ROOT, file)} imports ${m[1]}`);
    }
    expect(wrong).toEqual([]);
  });

  it("knows a driver import when it sees one", () => {
    const found = (text: string) => [...text.matchAll(PACKAGE_IMPORT)].map((m) => m[1]).filter((p) => DATABASE_DRIVERS.has(p!));
    expect(found('import Database from "better-sqlite3";\nimport type { Pool } from "pg";\nconst pg = await import("pg");\nimport { z } from "zod";')).toEqual(["better-sqlite3", "pg", "pg"]);
  });

  it("knows a violation when it sees one", () => {
    // The check itself: an adapter importing the ingest client would be caught.
    const from = areaOf(join(ROOT, "adapters", "openai-chat", "index.ts"));
    const to = areaOf(normalize(join(ROOT, "adapters", "openai-chat", "../../src/ingest/client.js")));
    expect([from, to]).toEqual(["adapters", "ingest"]);
    expect(ALLOWED[from]).not.toContain(to);
  });
});
