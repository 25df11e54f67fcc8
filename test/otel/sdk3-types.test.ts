/**
 * An app with only the OpenTelemetry JS SDK 3 line installed type-checks code
 * that registers tracepipe's span and log-record processors (and its OTLP
 * exporter) on SDK 3 providers: `tsc` over test/fixtures/otel-sdk3's
 * register-types.mjs, in an app folder whose node_modules hold the built
 * package's declarations and the SDK 3 packages, and no SDK 2 package.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, ROOT } from "../package/dist.js";
import { onCi } from "../helpers/services.js";
import { tempDir } from "../helpers/runs.js";

const FIXTURE = join(ROOT, "test", "fixtures", "otel-sdk3");
const installed = existsSync(join(FIXTURE, "node_modules", "@opentelemetry", "sdk-trace", "package.json"));
if (!installed) {
  const msg = `the OTel SDK 3 fixture is not installed (run \`npm ci\` in ${FIXTURE})`;
  if (onCi()) throw new Error(msg);
  process.stderr.write(`\n  NOTICE: ${msg}, so its type test is SKIPPED (with CI=true it fails instead).\n\n`);
}

/**
 * The app: tracepipe as npm installs it (package.json and dist's declarations;
 * its own dependencies beside it), the SDK 3 packages, and @types/node.
 */
function appFolder(): string {
  const app = tempDir("tp-sdk3-types-");
  const pkg = join(app, "node_modules", "tracepipe");
  cpSync(join(ROOT, "package.json"), join(pkg, "package.json"));
  cpSync(join(ROOT, "dist"), join(pkg, "dist"), { recursive: true, filter: (src) => !/\.(js|map)$/.test(src) });
  const deps = Object.keys(
    (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies,
  );
  for (const dep of [...deps, "@types/node", "undici-types"]) {
    const target = join(pkg, "node_modules", dep);
    if (!existsSync(join(ROOT, "node_modules", dep))) continue;
    mkdirSync(join(target, ".."), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", dep), target);
  }
  mkdirSync(join(app, "node_modules", "@types"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", "@types", "node"), join(app, "node_modules", "@types", "node"));
  for (const name of readdirSync(join(FIXTURE, "node_modules", "@opentelemetry"))) {
    mkdirSync(join(app, "node_modules", "@opentelemetry"), { recursive: true });
    symlinkSync(join(FIXTURE, "node_modules", "@opentelemetry", name), join(app, "node_modules", "@opentelemetry", name));
  }
  cpSync(join(FIXTURE, "register-types.mjs"), join(app, "app.mjs"));
  writeFileSync(join(app, "package.json"), JSON.stringify({ type: "module" }));
  // skipLibCheck off: a declaration of tracepipe's that names an SDK 2 module would not resolve here.
  const compilerOptions = {
    module: "NodeNext",
    moduleResolution: "NodeNext",
    target: "ES2022",
    lib: ["ES2023"],
    types: ["node"],
    strict: true,
    allowJs: true,
    checkJs: true,
    noEmit: true,
    skipLibCheck: false,
  };
  writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["app.mjs"] }));
  return app;
}

beforeAll(() => {
  if (installed) ensureBuilt();
}, 300_000);

describe.skipIf(!installed)("the OTel JS SDK 3 line: types", () => {
  it("code registering TraceSpanProcessor and TraceLogRecordProcessor on SDK 3 providers type-checks with only SDK 3 installed", () => {
    const app = appFolder();
    expect(existsSync(join(app, "node_modules", "@opentelemetry", "sdk-trace-node"))).toBe(false);
    const tsc = spawnSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], {
      cwd: app,
      encoding: "utf8",
    });
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);
  }, 180_000);
});
