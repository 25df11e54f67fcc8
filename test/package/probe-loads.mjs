// Child process: `node probe-loads.mjs <specifier> <out-file>` imports the
// specifier in a fresh process and prints every file that import loaded, as
// JSON: ESM URLs seen by a resolve hook plus the CommonJS module cache (CJS
// files required from CJS never pass through the ESM hooks on Node 20).
import { register, createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [specifier, out] = process.argv.slice(2);
register(new URL("./load-hook.mjs", import.meta.url), { data: { out } });
const t0 = performance.now();
const mod = await import(specifier);
const ms = performance.now() - t0;
const cjs = Object.keys(createRequire(import.meta.url).cache).map((p) => pathToFileURL(p).href);
const esm = readFileSync(out, "utf8").split("\n").filter(Boolean);
process.stdout.write(JSON.stringify({ exports: Object.keys(mod).sort(), files: [...new Set([...esm, ...cjs])].sort(), ms }));
