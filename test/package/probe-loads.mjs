// Child process: `node probe-loads.mjs <out> <specifier> [args...]` imports the
// specifier (a package name, or a script run with `args` as its argv) in a
// fresh process and writes `<out>.json`: its export names and every file the
// import loaded, i.e. the ESM URLs a resolve hook saw (written to <out> as they
// resolve) plus the CommonJS module cache (files that CommonJS code requires
// never pass through the ESM hooks on Node 20).
import { register, createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [out, specifier, ...args] = process.argv.slice(2);
writeFileSync(out, "");
register(new URL("./load-hook.mjs", import.meta.url), { data: { out } });
process.argv = [process.argv[0], specifier, ...args];
const mod = await import(specifier.startsWith("/") ? pathToFileURL(specifier).href : specifier);
const cjs = Object.keys(createRequire(import.meta.url).cache).map((p) => pathToFileURL(p).href);
const esm = readFileSync(out, "utf8").split("\n").filter(Boolean);
writeFileSync(`${out}.json`, JSON.stringify({ exports: Object.keys(mod).sort(), files: [...new Set([...esm, ...cjs])].sort() }));
