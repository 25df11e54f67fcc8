/**
 * The viewer's static files: plain ES modules, HTML and CSS shipped as they
 * are (no build step, nothing from a CDN). They sit in `assets/` beside this
 * module; a build that compiled this file to dist/ copies that folder too, and
 * when it has not, the source folder of the package is used.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const TYPES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  "api.js": "text/javascript; charset=utf-8",
  "list.js": "text/javascript; charset=utf-8",
  "trace.js": "text/javascript; charset=utf-8",
  "run.js": "text/javascript; charset=utf-8",
  "messages.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
};

/** The only names served; anything else is a 404 (no path is ever built from the request). */
export const ASSET_NAMES: ReadonlySet<string> = new Set(Object.keys(TYPES));

function assetDir(): string {
  const beside = fileURLToPath(new URL("./assets/", import.meta.url));
  if (existsSync(beside)) return beside;
  // dist/src/server/viewer -> <package>/src/server/viewer/assets
  return fileURLToPath(new URL("../../../../src/server/viewer/assets/", import.meta.url));
}

const cache = new Map<string, { data: Buffer; contentType: string }>();

export function asset(name: string): { data: Buffer; contentType: string } {
  let a = cache.get(name);
  if (!a) {
    const contentType = TYPES[name];
    if (!contentType) throw new RangeError(`no viewer asset ${name}`);
    a = { data: readFileSync(assetDir() + name), contentType };
    cache.set(name, a);
  }
  return a;
}
