// `npm run build` (also `prepare`, so `npm install` / `npm ci` run it): compile
// with tsc, copy the viewer's static files beside the compiled server, ship zod
// as one pre-bundled file, and bundle the adapter registry into one file.
//
// Why zod is pre-bundled: it is the one dependency the main entry loads, and it
// is about a hundred small modules (every locale among them, which its barrel
// evaluates eagerly); resolving and reading them was most of the cost of
// `import "tracepipe"`. One file loads in about half the time. Every compiled
// module of the package imports the same file, so there is one zod instance;
// the type declarations still name the `zod` package (same version).
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
const VENDOR_ZOD = join(DIST, "vendor", "zod.js");

// zod's barrel re-exports every locale's messages (`z.locales`), about half of the bundle's
// text, which every process that imports tracepipe would parse. tracepipe reports zod's
// issues in English only (zod configures `en` itself) and never selects a locale, so the
// bundle keeps `en` alone; the package's own `zod` install is untouched.
const englishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (a) =>
      a.resolveDir.includes(`${sep}node_modules${sep}zod${sep}`)
        ? { path: join(a.resolveDir, a.path), namespace: "zod-locales" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (a) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(a.path), "en.js"))};`,
      resolveDir: dirname(a.path),
    }));
  },
};

function run(cmd, args) {
  const r = spawnSync(process.execPath, [join(ROOT, cmd), ...args], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

export async function build() {
  run("node_modules/typescript/bin/tsc", ["-p", join(ROOT, "tsconfig.build.json")]);
  cpSync(join(ROOT, "src/server/viewer/assets"), join(DIST, "src/server/viewer/assets"), { recursive: true });
  // uPlot, for the monitoring charts, served as the other assets are (src/server/viewer/assets.ts).
  cpSync(join(ROOT, "node_modules/uplot/dist/uPlot.iife.min.js"), join(DIST, "src/server/viewer/assets/uplot.js"));
  cpSync(join(ROOT, "node_modules/uplot/dist/uPlot.min.css"), join(DIST, "src/server/viewer/assets/uplot.css"));
  const { build: esbuild } = await import("esbuild");
  await esbuild({
    entryPoints: [join(ROOT, "node_modules/zod/index.js")],
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "warning",
    outfile: VENDOR_ZOD,
    plugins: [englishOnly],
  });
  for (const file of jsFiles(DIST)) {
    if (file === VENDOR_ZOD) continue;
    const text = readFileSync(file, "utf8");
    if (!text.includes('"zod"')) continue;
    let rel = relative(dirname(file), VENDOR_ZOD).split(sep).join("/");
    if (!rel.startsWith(".")) rel = `./${rel}`;
    writeFileSync(file, text.replace(/(\bfrom\s*|\bimport\s*\(\s*)"zod"/g, `$1"${rel}"`));
  }
  await bundleAdapterRegistry();
}

// The adapter registry (dist/adapters/index.js) and the ~60 modules of the vendor
// adapters behind it are loaded by the main entry (normalize, the wrappers); as
// separate files they cost about twice what one file does. The compiled registry
// is replaced by a bundle of itself and everything under dist/adapters/ it
// reaches; what it imports from outside (errors, schema, zod) stays an import of
// the shared module, so NormalizeError and the schemas are still one instance.
// The per-adapter subpath entries (tracepipe/adapters/gemini, ...) stay as
// compiled: adapters are pure functions, so a second copy of one holds no state.
async function bundleAdapterRegistry() {
  const { build: esbuild } = await import("esbuild");
  const dir = join(DIST, "adapters");
  const entry = join(dir, "index.js");
  const result = await esbuild({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    outfile: entry,
    logLevel: "warning",
    plugins: [
      {
        name: "outside-adapters-stays-external",
        setup(b) {
          b.onResolve({ filter: /^\./ }, (a) => {
            const target = join(a.resolveDir, a.path);
            if (target.startsWith(dir + sep)) return undefined;
            let rel = relative(dir, target).split(sep).join("/");
            if (!rel.startsWith(".")) rel = `./${rel}`;
            return { path: rel, external: true };
          });
        },
      },
    ],
  });
  writeFileSync(entry, result.outputFiles[0].text);
}

function* jsFiles(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* jsFiles(p);
    else if (p.endsWith(".js")) yield p;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
