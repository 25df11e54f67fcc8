/**
 * The viewer's static files: plain ES modules, HTML and CSS shipped as they
 * are (no build step, nothing from a CDN). They sit in `assets/` beside this
 * module in the sources; a build copies that folder to the same path under
 * dist/, while this code itself runs from a chunk elsewhere in dist/, so the
 * folder is found from the package's root.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { packageRoot } from "../../internal/package-root.js";

const TYPES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  "api.js": "text/javascript; charset=utf-8",
  "list.js": "text/javascript; charset=utf-8",
  "trace.js": "text/javascript; charset=utf-8",
  "run.js": "text/javascript; charset=utf-8",
  "messages.js": "text/javascript; charset=utf-8",
  "feedback.js": "text/javascript; charset=utf-8",
  "webhooks.js": "text/javascript; charset=utf-8",
  "threads.js": "text/javascript; charset=utf-8",
  "monitor.js": "text/javascript; charset=utf-8",
  "charts.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
  "uplot.js": "text/javascript; charset=utf-8",
  "uplot.css": "text/css; charset=utf-8",
};

/**
 * uPlot (the monitoring charts) is served from its own package's files, as
 * published: a dependency, so it ships with tracepipe, and a build copies the
 * two files beside the other assets (scripts/build.mjs).
 */
const VENDOR: Record<string, string> = {
  "uplot.js": "uplot/dist/uPlot.iife.min.js",
  "uplot.css": "uplot/dist/uPlot.min.css",
};

/** The only names served; anything else is a 404 (no path is ever built from the request). */
export const ASSET_NAMES: ReadonlySet<string> = new Set(Object.keys(TYPES));

function assetDir(): string {
  const beside = fileURLToPath(new URL("./assets/", import.meta.url));
  if (existsSync(beside)) return beside;
  const root = packageRoot() ?? process.cwd();
  const built = join(root, "dist/src/server/viewer/assets/");
  return existsSync(built) ? built : join(root, "src/server/viewer/assets/");
}

const cache = new Map<string, { data: Buffer; contentType: string }>();

export function asset(name: string): { data: Buffer; contentType: string } {
  let a = cache.get(name);
  if (!a) {
    const contentType = TYPES[name];
    if (!contentType) throw new RangeError(`no viewer asset ${name}`);
    const dir = assetDir();
    const vendor = VENDOR[name];
    const path = vendor && !existsSync(dir + name) ? createRequire(import.meta.url).resolve(vendor) : dir + name;
    a = { data: readFileSync(path), contentType };
    cache.set(name, a);
  }
  return a;
}
