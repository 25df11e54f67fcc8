import { beforeAll, describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appDir, definitionsOf, distFilesOf, ensureBuilt, probeLoads, ROOT } from "./dist.js";

/** What a traced application must not pay for when it imports tracepipe (issue 12). */
const HEAVY = ["better-sqlite3", "busboy", "cli-progress", "commander", "ioredis", "pg", "protobufjs", "tiktoken"];
/** Functions and classes of modules the main entry must not load (by their source names, which the build keeps). */
const LAZY = [
  "createCollector",
  "SqliteStore",
  "PostgresStore",
  "RedisRateLimiter",
  "TraceSpanProcessor",
  "startOtlpGrpc",
  "dateTimeProblem",
];
const heavyIn = (packages: string[]) => packages.filter((p) => HEAVY.includes(p) || p.startsWith("@opentelemetry/"));

beforeAll(() => ensureBuilt(), 180_000);

describe("the main entry", () => {
  it("loads none of the OTel SDK/exporter, protobufjs, ioredis, busboy, cli-progress, better-sqlite3, pg, tiktoken or commander", () => {
    const { exports, packages, files } = probeLoads(appDir(), "tracepipe");
    expect(heavyIn(packages)).toEqual([]);
    // zod ships pre-bundled in dist/vendor (scripts/build.mjs): no package from node_modules at all
    // (wrapBedrock included: it reaches the AWS SDK client structurally, never importing it).
    expect(packages).toEqual([]);
    // The native format and the price rows are zod/mini schemas: the main entry loads the small
    // bundle of the zod/mini functions the package uses, never the whole of zod.
    expect(files.filter((f) => f.includes("/dist/vendor/"))).toEqual([expect.stringMatching(/\/dist\/vendor\/zod-mini\.js$/)]);
    // The main entry is one file of its own plus a few shared chunks (scripts/build.mjs), not a file per module.
    expect(distFilesOf(files).length, distFilesOf(files).join(" ")).toBeLessThanOrEqual(5);
    // No code of the collector, the stores, the Redis limiter or the span processor is among what it loaded, in
    // whatever chunk the build put it; nor the run schema (dateTimeProblem), which is the collector's.
    expect(Object.fromEntries(LAZY.map((name) => [name, definitionsOf(files, name)]))).toEqual(Object.fromEntries(LAZY.map((n) => [n, 0])));
    for (const name of [
      "traceable",
      "getCurrentRun",
      "wrapOpenAI",
      "wrapAnthropic",
      "wrapGemini",
      "wrapBedrock",
      "flush",
      "Client",
      "getDefaultClient",
      "setDefaultClient",
      "normalize",
      "detectFormat",
      "validate",
      "ValidationError",
      "TracepipeError",
    ])
      expect(exports).toContain(name);
    // The rest lives under subpaths.
    for (const name of [
      "createCollector",
      "openStore",
      "backfill",
      "Deployments",
      "TraceSpanProcessor",
      "RedisRateLimiter",
      "freeEncoders",
      "vetWebhookUrl",
    ])
      expect(exports).not.toContain(name);
  });

  it("ships zod with its English messages only (zod's other locales are half its text, and never used)", () => {
    const zod = readFileSync(join(ROOT, "dist/vendor/zod.js"), "utf8");
    const script = `const { z } = await import(${JSON.stringify(join(ROOT, "dist/vendor/zod.js"))}); console.log(z.string().safeParse(1).error.issues[0].message);`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("Invalid input: expected string, received number");
    // Part of German's message for an invalid input in zod's `de` locale (the bundle may escape the ü).
    expect(zod).not.toContain("ltige Eingabe");
    expect(readFileSync(join(ROOT, "dist/vendor/zod-mini.js"), "utf8")).not.toContain("ltige Eingabe");
  });

  it("reports the native format's and the price rows' issues in English from the main entry alone", () => {
    const script = `import { validate, registerPrices } from "tracepipe";
let priceIssues;
try { registerPrices([{ model: " ", input: 1, output: -1 }]); } catch (err) { priceIssues = err.issues; }
console.log(JSON.stringify({ messages: validate([{ role: "user", content: [{ type: "text", text: 1 }] }]), priceIssues }));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: appDir(), encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      messages: [{ loc: [0, "content", 0, "text"], msg: "Invalid input: expected string, received number", type: "invalid_type" }],
      priceIssues: [
        { loc: ["prices", 0, "model"], msg: "Too small: expected string to have >=1 characters", type: "too_small" },
        { loc: ["prices", 0, "output"], msg: "Too small: expected number to be >=0", type: "too_small" },
      ],
    });
  });

  it("keeps the zod locale an application chose before importing tracepipe", () => {
    const zod = JSON.stringify(join(ROOT, "node_modules/zod/index.js"));
    const script = `const { z } = await import(${zod});
z.config(z.locales.fr());
await import("tracepipe");
console.log(z.string().safeParse(1).error.issues[0].message);`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: appDir(), encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(
      spawnSync(process.execPath, ["--input-type=module", "-e", script.replace('await import("tracepipe");', "")], {
        encoding: "utf8",
      }).stdout.trim(),
    );
    expect(r.stdout).not.toContain("Invalid input");
  });

  it("loads the embedded store on first use, and the traced call is stored", async () => {
    const dir = appDir();
    writeFileSync(
      join(dir, "app.mjs"),
      `import { createRequire } from "node:module";
import { Client, traceable } from "tracepipe";
const sqliteLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((p) => p.includes("/node_modules/better-sqlite3/"));
const before = sqliteLoaded();
const client = new Client({ dbPath: "traces.db", project: "lazy", exitHooks: false, warn: (m) => console.error(m) });
const double = traceable(async (x) => x * 2, { name: "double", client });
const answer = await double(21);
const untilFirstSend = sqliteLoaded();
await client.flush();
const after = sqliteLoaded();
const { stats } = client;
await client.shutdown();
const { openStore } = await import("tracepipe/server");
const store = await openStore("traces.db");
const { runs } = await store.queryRuns({ project: "lazy" });
await store.close();
console.log(JSON.stringify({ answer, before, untilFirstSend, after, stats, runs: runs.map((r) => [r.name, r.outputs]) }));
`,
    );
    const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, ["app.mjs"], { cwd: dir, env: { ...process.env, TRACEPIPE_ENDPOINT: "" } });
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
      child.on("close", (code) => resolve({ code, out, err }));
    });
    expect(r.code, r.err).toBe(0);
    const got = JSON.parse(r.out) as {
      answer: number;
      before: boolean;
      untilFirstSend: boolean;
      after: boolean;
      stats: { delivered: number; spooled: number; deadLettered: number };
      runs: [string, unknown][];
    };
    expect(got.answer).toBe(42);
    expect([got.before, got.untilFirstSend, got.after]).toEqual([false, false, true]);
    expect(got.stats).toMatchObject({ spooled: 0, deadLettered: 0 });
    expect(got.runs).toEqual([["double", { output: 42 }]]);
  });
});

describe("subpaths", () => {
  it("each loads what it needs, and only tracepipe/otel loads OpenTelemetry (an optional peer)", () => {
    const dir = appDir();
    const probed = new Map<string, ReturnType<typeof probeLoads>>();
    const probe = (s: string) => probed.get(s) ?? probed.set(s, probeLoads(dir, s)).get(s)!;
    const otel = probe("tracepipe/otel");
    expect(otel.exports).toEqual(expect.arrayContaining(["TraceSpanProcessor", "createOtlpTraceExporter", "SPAN_ADAPTERS", "spanToRun"]));
    expect(otel.packages).toContain("@opentelemetry/exporter-trace-otlp-http");
    expect(otel.packages.filter((p) => ["better-sqlite3", "busboy", "protobufjs", "ioredis", "cli-progress"].includes(p))).toEqual([]);

    const expected: Record<string, string[]> = {
      "tracepipe/server": ["createCollector", "openStore", "Run", "RunPatch"],
      "tracepipe/store": ["openStore", "CursorError", "BatchCheck", "checkIngestBatch"],
      "tracepipe/backfill": ["backfill"],
      "tracepipe/control": ["Deployments", "DeploymentCreateRequest"],
      "tracepipe/webhooks": ["loadWebhookConfig", "vetWebhookUrl", "WebhookSender"],
      "tracepipe/ratelimit": ["MemoryRateLimiter", "RedisRateLimiter", "RATE_LIMITS"],
      "tracepipe/adapters/openai-chat": ["normalize", "openaiChat"],
      "tracepipe/adapters/gemini": ["normalize", "gemini"],
      "tracepipe/adapters/langchain": ["normalize", "langchain"],
    };
    for (const [specifier, names] of Object.entries(expected)) {
      const { exports, packages } = probe(specifier);
      expect(exports, specifier).toEqual(expect.arrayContaining(names));
      expect(
        packages.filter((p) => p.startsWith("@opentelemetry/")),
        specifier,
      ).toEqual([]);
    }
    // The names LAZY looks for are the ones these entries define: the main entry's check above could fail.
    const server = probe("tracepipe/server");
    for (const name of ["createCollector", "dateTimeProblem"]) expect(definitionsOf(server.files, name), name).toBe(1);
    expect(definitionsOf(otel.files, "TraceSpanProcessor")).toBe(1);
    expect(definitionsOf(probe("tracepipe/ratelimit").files, "RedisRateLimiter")).toBe(1);
    // The store's entry loads no database driver until a store is opened (openStore imports the one its target names).
    expect(probe("tracepipe/store").packages.filter((p) => ["better-sqlite3", "pg"].includes(p))).toEqual([]);
  }, 120_000);

  it("resolve with their types under moduleResolution node10 (typesVersions) and nodenext (exports)", async () => {
    const dir = appDir();
    const source = `import { traceable, wrapOpenAI, Client, normalize, type Run, type Message } from "tracepipe";
import { TraceSpanProcessor, createOtlpTraceExporter } from "tracepipe/otel";
import { createCollector, openStore } from "tracepipe/server";
import { openStore as openStoreToo, type Store } from "tracepipe/store";
import { backfill } from "tracepipe/backfill";
import { Deployments } from "tracepipe/control";
import { WebhookSender } from "tracepipe/webhooks";
import { RedisRateLimiter } from "tracepipe/ratelimit";
import { openaiChat } from "tracepipe/adapters/openai-chat";
export const used = [traceable, wrapOpenAI, Client, normalize, TraceSpanProcessor, createOtlpTraceExporter, createCollector, openStore, openStoreToo, backfill, Deployments, WebhookSender, RedisRateLimiter, openaiChat];
export type Used = [Run, Message, Store];
// Resolved to their declarations, not to any: these misuses must be errors.
// @ts-expect-error batchSize is a number
new Client({ batchSize: "many" });
// @ts-expect-error backfill takes options
void backfill(42);
`;
    writeFileSync(join(dir, "node10.ts"), source);
    writeFileSync(join(dir, "nodenext.mts"), source);
    const common = { strict: true, noEmit: true, skipLibCheck: true, types: ["node"], typeRoots: [join(ROOT, "node_modules/@types")] };
    writeFileSync(
      join(dir, "tsconfig.node10.json"),
      JSON.stringify({
        compilerOptions: {
          ...common,
          module: "commonjs",
          moduleResolution: "node10",
          target: "es2022",
          esModuleInterop: true,
          ignoreDeprecations: "5.0",
        },
        files: ["node10.ts"],
      }),
    );
    writeFileSync(
      join(dir, "tsconfig.nodenext.json"),
      JSON.stringify({
        compilerOptions: { ...common, module: "nodenext", moduleResolution: "nodenext", target: "es2022" },
        files: ["nodenext.mts"],
      }),
    );
    const tsc = (config: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", config], { cwd: dir });
        let out = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
        child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
        child.on("close", (code) => resolve({ code, out }));
      });
    const [node10, nodenext] = await Promise.all([tsc("tsconfig.node10.json"), tsc("tsconfig.nodenext.json")]);
    expect(node10.out).toBe("");
    expect(node10.code).toBe(0);
    expect(nodenext.out).toBe("");
    expect(nodenext.code).toBe(0);
  }, 120_000);
});

describe("CommonJS", () => {
  it("require()s the package and its subpaths (require(esm), Node >= 20.19) and uses them", () => {
    const dir = appDir("commonjs");
    writeFileSync(
      join(dir, "app.cjs"),
      `const tp = require("tracepipe");
const rec = tp.normalize({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
console.log(JSON.stringify({
  main: [typeof tp.traceable, typeof tp.wrapOpenAI, typeof tp.Client, typeof tp.flush],
  format: rec.format,
  text: rec.inputs.messages[0].content[0].text,
  otel: typeof require("tracepipe/otel").TraceSpanProcessor,
  server: typeof require("tracepipe/server").createCollector,
  backfill: typeof require("tracepipe/backfill").backfill,
  control: typeof require("tracepipe/control").Deployments,
  ratelimit: typeof require("tracepipe/ratelimit").MemoryRateLimiter,
}));
`,
    );
    const r = spawnSync(process.execPath, ["app.cjs"], { cwd: dir, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      main: ["function", "function", "function", "function"],
      format: "openai-chat",
      text: "hi",
      otel: "function",
      server: "function",
      backfill: "function",
      control: "function",
      ratelimit: "function",
    });
  });
});
