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
//
// The modules the main entry loads (the native format's schemas, the price rows)
// use zod/mini instead, whose functions are separate exports: those are bundled
// into dist/vendor/zod-mini.js with only the functions the package imports, a
// small fraction of zod. When both files are loaded (the collector), zod keeps
// its configuration and registry on globalThis, so the two copies share them.
//
// Every bundle is minified in whitespace and syntax, not in names, so stack
// traces still name the functions.
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
const VENDOR_ZOD = join(DIST, "vendor", "zod.js");
const VENDOR_ZOD_MINI = join(DIST, "vendor", "zod-mini.js");
const MINIFY = { minifyWhitespace: true, minifySyntax: true };

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
    ...MINIFY,
  });
  await bundleZodMini(esbuild);
  for (const file of jsFiles(DIST)) {
    if (file === VENDOR_ZOD || file === VENDOR_ZOD_MINI) continue;
    const text = readFileSync(file, "utf8");
    if (!/"zod(\/mini|\/locales)?"/.test(text)) continue;
    const to = (vendored) => {
      const rel = relative(dirname(file), vendored).split(sep).join("/");
      return rel.startsWith(".") ? rel : `./${rel}`;
    };
    writeFileSync(
      file,
      text
        .replace(/(\bfrom\s*|\bimport\s*\(\s*)"zod"/g, `$1"${to(VENDOR_ZOD)}"`)
        .replace(/(\bfrom\s*)"zod\/(mini|locales)"/g, `$1"${to(VENDOR_ZOD_MINI)}"`),
    );
  }
  await bundleAdapterRegistry();
}

// The names the compiled package imports from zod/mini and zod/locales, which is
// all that dist/vendor/zod-mini.js exports. Only named imports can be counted, so
// any other form of import is refused here rather than shipped half-bundled.
async function bundleZodMini(esbuild) {
  const names = { mini: new Set(), locales: new Set() };
  for (const file of jsFiles(join(DIST, "src"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\b(import|export)\b([^;]*?)\bfrom\s*"zod\/(mini|locales)"/g)) {
      const named = /^\s*\{([^}]*)\}\s*$/.exec(m[2]);
      if (m[1] !== "import" || !named) throw new Error(`${file}: import from zod/${m[3]} by name only (${m[0]})`);
      for (const spec of named[1].split(",")) if (spec.trim()) names[m[3]].add(spec.trim().split(/\s+as\s+/)[0]);
    }
    if (/\bimport\s*\(\s*"zod\/(mini|locales)"|\bimport\s*"zod\/(mini|locales)"/.test(text))
      throw new Error(`${file}: import from zod/mini or zod/locales by name only`);
  }
  const list = (set) => [...set].sort().join(", ");
  await esbuild({
    stdin: {
      contents: `export { ${list(names.mini)} } from "zod/mini";\nexport { ${list(names.locales)} } from "zod/locales";\n`,
      resolveDir: ROOT,
      sourcefile: "zod-mini-entry.js",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "warning",
    outfile: VENDOR_ZOD_MINI,
    plugins: [englishOnly],
    ...MINIFY,
  });
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
    ...MINIFY,
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
