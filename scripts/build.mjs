// `npm run build` (also `prepare`, so `npm install` / `npm ci` run it): the
// JavaScript of dist/ is one esbuild build with code splitting over every entry
// point of the package; tsc writes only the type declarations beside it.
//
// Why bundle: a cold `import "tracepipe"` is mostly the ES module loader's own
// work per file (resolve, open, read, compile), not the package's code. tsc
// writes one file per source file, so the main entry paid that work once per
// module it reaches; one file per entry plus a few shared chunks pays it a few
// times.
//
// Why one build with splitting rather than a bundle per entry: a module reached
// from several entries (the errors for `instanceof`, the default Client, the run
// context) must have exactly one instance in a process that loads several
// entries. esbuild puts each module in exactly one output file: the entry's own
// when only that entry reaches it, else a chunk shared by the entries that do.
// Every `import()` in the sources is a split point of the same graph, so the
// store, the server, the OTel SDK paths and the drivers still load only when used.
// Left alone, that rule cuts the main entry's modules into a chunk for every
// combination of entries that reaches them; everyEntryReachesTheMainEntry (below)
// keeps them in one.
//
// The entries: every `exports` subpath of package.json, each CLI command (the
// launcher is a file apart: buildLauncher), and the modules the benchmarks and a
// test fixture import by path (BY_PATH). Each keeps
// the path tsc gives its declarations, so each subpath's `types` sit beside its
// JavaScript.
//
// zod stays outside the split graph, as two files in dist/vendor (bundleZod): the
// main entry loads only the zod/mini functions the package uses, the collector's
// side all of zod, and both share zod's one state. Every other dependency stays
// an import of its package.
//
// Names are never minified, so stack traces and `constructor.name` name things.
// Bundling renames only a top-level binding that clashes with another in its
// chunk (two adapters' `textBlock`: one becomes `textBlock2`); a class so
// renamed would change its `name`, so the build refuses one
// (classesKeepTheirNames). esbuild's `keepNames` is off for our code: it wraps
// every function created at run time in a call that defines its `name`, closures
// made per call, per record and per request included, a cost on every hot path
// for names that only differ on a clash. zod's bundle keeps it (zod's own code,
// names as zod's authors left them).
// Code that finds files relative to its own module (the viewer's assets, the
// package's version) looks from the package root instead (src/internal/package-root.ts),
// since bundled code runs from a chunk.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
/** Where a build is written before it replaces dist/. */
const NEXT = join(ROOT, "dist.next");
const VENDOR_ZOD = join(NEXT, "vendor", "zod.js");
const VENDOR_ZOD_MINI = join(NEXT, "vendor", "zod-mini.js");
/** Whitespace and syntax are minified, names never: stack traces and `constructor.name` name the code. */
const NAMES_KEPT = { minifyWhitespace: true, minifySyntax: true, keepNames: false };
/** For zod's bundle: as NAMES_KEPT, and every function's `name` as zod's source has it. */
const ZOD_NAMES_KEPT = { ...NAMES_KEPT, keepNames: true };

/**
 * Modules outside `exports` that benchmarks (and test/fixtures/otel-sdk3) import
 * from dist/ by path: the benchmarks time internals a user reaches through the
 * entries. As entries of the same build they are the same instances the package
 * entries use.
 */
const BY_PATH = [
  "adapters/index.ts",
  "src/normalize.ts",
  "src/tokens/index.ts",
  "src/ingest/index.ts",
  "src/ingest/privacy.ts",
  "src/tracing/llm.ts",
  "src/run/safe.ts",
  "src/run/deferred.ts",
  "src/backfill/convert.ts",
  "src/backfill/formats.ts",
  "src/server/app.ts",
  "src/store/open.ts",
  "src/store/postgres/store.ts",
];

/** The CLI's commands: the modules src/cli/index.ts imports when one runs (`import("./serve.js")`, ...). */
function commands() {
  const launcher = readFileSync(join(ROOT, "src/cli/index.ts"), "utf8");
  return [...launcher.matchAll(/\bimport\(\s*"\.\/([\w-]+)\.js"\s*\)/g)].map((m) => `src/cli/${m[1]}.ts`);
}

/** The sources of the split build's entries: its exports' JavaScript, the CLI's commands, and BY_PATH. */
function entryPoints() {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const sources = new Set([...commands(), ...BY_PATH]);
  for (const target of Object.values(pkg.exports)) {
    const js = typeof target === "string" ? target : target.default;
    if (!js.startsWith("./dist/")) continue;
    sources.add(js.slice("./dist/".length).replace(/\.js$/, ".ts"));
  }
  return [...sources].map((s) => join(ROOT, s));
}

// zod's barrel re-exports every locale's messages (`z.locales`), about half of its
// text, which every process that loads the collector would parse. tracepipe reports
// zod's issues in English only and never selects a locale, so the build keeps `en`
// alone; the package's own `zod` install is untouched.
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

/**
 * Every package stays an import of its own (a dependency or an optional peer).
 * zod's three specifiers become the package's own `#zod`, `#zod/mini` and
 * `#zod/locales` (package.json `imports`: the files in dist/vendor), which
 * resolve alike from an entry or a chunk at any depth of dist/.
 */
const dependenciesStayExternal = {
  name: "dependencies-stay-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (a) => {
      if (a.path.startsWith("node:")) return undefined;
      return { path: ZOD.includes(a.path) ? `#${a.path}` : a.path, external: true };
    });
  },
};
const ZOD = ["zod", "zod/mini", "zod/locales"];

/**
 * Every entry, and every `import()` target, also reaches the main entry's whole
 * static graph. esbuild puts a module in the chunk shared
 * by exactly the entries that reach it, so without this the main entry's modules
 * would be cut into dozens of chunks, one per combination of subpaths and
 * commands that happen to use them; with it they are one chunk, which the other
 * entries load anyway for most of it.
 */
function everyEntryReachesTheMainEntry(main) {
  return {
    name: "every-entry-reaches-the-main-entry",
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (a) => {
        if (a.pluginData === "as-is") return undefined;
        const entry = a.kind === "entry-point" && a.path !== main;
        if (!entry && !(a.kind === "dynamic-import" && a.path.startsWith("."))) return undefined;
        const r = await b.resolve(a.path, { kind: "import-statement", resolveDir: a.resolveDir || ROOT, pluginData: "as-is" });
        if (r.errors.length > 0 || r.external) return undefined;
        return { path: r.path, namespace: "with-main" };
      });
      b.onLoad({ filter: /.*/, namespace: "with-main" }, (a) => {
        const source = JSON.stringify(a.path);
        const hasDefault = /\bexport\s+default\b|\bexport\s*\{[^}]*\bdefault\b/.test(readFileSync(a.path, "utf8"));
        return {
          // The namespace is read, so esbuild keeps every export of the main entry reachable from here.
          contents: `export * from ${source};\n${hasDefault ? `export { default } from ${source};\n` : ""}import * as main from ${JSON.stringify(main)};\nvoid Object.isFrozen(main);\n`,
          resolveDir: dirname(a.path),
          loader: "js",
        };
      });
    },
  };
}

function run(cmd, args) {
  const r = spawnSync(process.execPath, [join(ROOT, cmd), ...args], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

export async function build() {
  // Built aside and swapped in whole: a fresh dist/ holds no module left from an earlier layout (imported by
  // path, it would be a second instance), and a process that starts the CLI meanwhile finds the old one.
  rmSync(NEXT, { recursive: true, force: true });
  run("node_modules/typescript/bin/tsc", ["-p", join(ROOT, "tsconfig.build.json"), "--emitDeclarationOnly", "--outDir", NEXT]);
  const { build: esbuild } = await import("esbuild");
  const main = join(ROOT, "src/index.ts");
  const { outputFiles } = await esbuild({
    entryPoints: entryPoints(),
    outbase: ROOT,
    outdir: NEXT,
    entryNames: "[dir]/[name]",
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    write: false,
    logLevel: "warning",
    plugins: [dependenciesStayExternal, everyEntryReachesTheMainEntry(main)],
    // Bundled code sits on a few long lines: `node --enable-source-maps` (and profiles, benchmarks/overhead-breakdown.ts)
    // map a position back to its source file and line.
    sourcemap: "linked",
    sourcesContent: false,
    ...NAMES_KEPT,
  });
  classesKeepTheirNames(outputFiles);
  await bundleZod(esbuild, outputFiles);
  await buildLauncher(esbuild);
  for (const file of outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.contents);
  }
  const assets = join(NEXT, "src/server/viewer/assets");
  cpSync(join(ROOT, "src/server/viewer/assets"), assets, { recursive: true });
  // uPlot, for the monitoring charts, served as the other assets are (src/server/viewer/assets.ts).
  cpSync(join(ROOT, "node_modules/uplot/dist/uPlot.iife.min.js"), join(assets, "uplot.js"));
  cpSync(join(ROOT, "node_modules/uplot/dist/uPlot.min.css"), join(assets, "uplot.css"));
  // The stamp: a dist/ whose stamp is newer than every source is complete and current (test/helpers/cli.ts, test/package/dist.ts).
  writeFileSync(join(NEXT, ".build-stamp"), `${new Date().toISOString()}\n`);
  rmSync(DIST, { recursive: true, force: true });
  renameSync(NEXT, DIST);
}

/**
 * The CLI's launcher (dist/src/cli/index.js, which bin/tracepipe.js loads) is
 * one file of its own, outside the split graph: `tracepipe --help` then loads it
 * and commander, and a command loads its own entry of the split build
 * (dist/src/cli/<command>.js) with the rest. What the launcher shares with the
 * commands is constants and the package's version, so its own copy holds no
 * state another module needs. dist/src/cli/run.js (what the tests start) runs it.
 */
async function buildLauncher(esbuild) {
  const common = { format: "esm", platform: "node", target: "node20", logLevel: "warning", sourcemap: "linked", sourcesContent: false };
  const commandsStayApart = {
    name: "commands-stay-apart",
    setup(b) {
      b.onResolve({ filter: /^\./ }, (a) => (a.kind === "dynamic-import" ? { path: a.path, external: true } : undefined));
    },
  };
  await esbuild({
    ...common,
    ...NAMES_KEPT,
    entryPoints: [join(ROOT, "src/cli/index.ts")],
    outfile: join(NEXT, "src/cli/index.js"),
    bundle: true,
    plugins: [dependenciesStayExternal, commandsStayApart],
  });
  await esbuild({ ...common, entryPoints: [join(ROOT, "src/cli/run.ts")], outfile: join(NEXT, "src/cli/run.js") });
}

/** Every name a class is declared with in the package's sources. */
function sourceClassNames() {
  const names = new Set();
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".ts")) for (const m of readFileSync(path, "utf8").matchAll(/\bclass\s+([\w$]+)/g)) names.add(m[1]);
    }
  };
  for (const dir of ["src", "adapters"]) walk(join(ROOT, dir));
  return names;
}

/**
 * Without keepNames a class whose binding the bundler renamed (a clash in its
 * chunk) would be named by the new binding: its errors' `name`, stack traces and
 * `constructor.name` would change. Refuse the build instead, naming the class, so
 * the clash is resolved in the source (rename one of the two).
 */
function classesKeepTheirNames(outputs) {
  const known = sourceClassNames();
  const renamed = new Set();
  for (const { path, text } of outputs) {
    if (!path.endsWith(".js")) continue;
    for (const m of text.matchAll(/\bclass\s+([\w$]+)|\b([\w$]+)=class\b/g)) {
      const name = m[1] ?? m[2];
      if (!known.has(name)) renamed.add(`${name} (${path.slice(NEXT.length + 1)})`);
    }
  }
  if (renamed.size) throw new Error(`the bundle renamed these classes, which would change their names: ${[...renamed].join(", ")}`);
}

/**
 * zod as two files in dist/vendor: all of zod (without its other locales) for
 * the collector's side, and the zod/mini functions the package imports for the
 * main entry's side. zod's file-sized modules cannot be split finer than a file
 * by esbuild, so in the split graph the main entry would load whole zod core
 * modules for the sake of the few functions it uses. Two copies of zod share one
 * state: zod keeps its configuration and global registry on globalThis, and its
 * `instanceof` checks look at a schema's traits, not its class.
 */
async function bundleZod(esbuild, outputs) {
  const names = { mini: new Set(), locales: new Set() };
  for (const { path, text } of outputs) {
    if (!path.endsWith(".js")) continue;
    for (const m of text.matchAll(/\b(import|export)\b([^;]*?)\bfrom\s*"#zod\/(mini|locales)"/g)) {
      const named = /^\s*\{([^}]*)\}\s*$/.exec(m[2]);
      if (m[1] !== "import" || !named) throw new Error(`${path}: import from zod/${m[3]} by name only (${m[0]})`);
      for (const spec of named[1].split(",")) if (spec.trim()) names[m[3]].add(spec.trim().split(/\s+as\s+/)[0]);
    }
    if (/\bimport\s*\(\s*"#zod\/(mini|locales)"|\bimport\s*"#zod\/(mini|locales)"/.test(text))
      throw new Error(`${path}: import from zod/mini or zod/locales by name only`);
  }
  const list = (set) => [...set].sort().join(", ");
  const common = {
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning",
    plugins: [englishOnly],
    ...ZOD_NAMES_KEPT,
  };
  await esbuild({ ...common, entryPoints: [join(ROOT, "node_modules/zod/index.js")], outfile: VENDOR_ZOD });
  await esbuild({
    ...common,
    stdin: {
      contents: `export { ${list(names.mini)} } from "zod/mini";\nexport { ${list(names.locales)} } from "zod/locales";\n`,
      resolveDir: ROOT,
      sourcefile: "zod-mini-entry.js",
    },
    outfile: VENDOR_ZOD_MINI,
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
