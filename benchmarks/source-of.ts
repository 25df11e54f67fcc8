/**
 * The source file a profiled function of the built package came from. dist/'s
 * JavaScript is bundled into entries and shared chunks (scripts/build.mjs), so a
 * profile's URL names a chunk; the build's linked source maps name the module.
 * Returned in the unbundled shape `<dist>/src/tracing/llm.js`, so a stage can be
 * told by the source file's path whichever chunk holds it.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** One Base64 VLQ segment of a source map's `mappings` as its numbers. */
function vlq(segment: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const ch of segment) {
    const digit = B64.indexOf(ch);
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}

/** Per generated line, its segments' [generated column, source index], in column order. */
interface Decoded {
  lines: [number, number][][];
  sources: string[];
}

function decode(mapPath: string): Decoded {
  const map = JSON.parse(readFileSync(mapPath, "utf8")) as { sources: string[]; mappings: string };
  const lines: [number, number][][] = [];
  let source = 0;
  for (const line of map.mappings.split(";")) {
    const segs: [number, number][] = [];
    let column = 0;
    for (const seg of line.split(",")) {
      if (!seg) continue;
      const v = vlq(seg);
      column += v[0]!;
      if (v.length > 1) {
        source += v[1]!;
        segs.push([column, source]);
      }
    }
    lines.push(segs);
  }
  return { lines, sources: map.sources.map((s) => resolve(dirname(mapPath), s)) };
}

const maps = new Map<string, Decoded | null>();

/** `url` itself unless it is a file of a build's dist/ with a source map: then its source's path, as dist/<path>.js. */
export function sourceOf(url: string, line: number, column: number): string {
  const m = /^(file:\/\/.*\/dist)\//.exec(url);
  if (!m || line < 0) return url;
  const file = fileURLToPath(url);
  let decoded = maps.get(file);
  if (decoded === undefined) {
    decoded = existsSync(`${file}.map`) ? decode(`${file}.map`) : null;
    maps.set(file, decoded);
  }
  const segs = decoded?.lines[line];
  if (!decoded || !segs || segs.length === 0) return url;
  let lo = 0;
  let hi = segs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (segs[mid]![0] <= column) lo = mid;
    else hi = mid - 1;
  }
  const source = decoded.sources[segs[lo]![1]];
  if (!source) return url;
  const root = dirname(fileURLToPath(m[1]!));
  const rel = source.startsWith(root + sep) ? source.slice(root.length + 1) : undefined;
  return rel ? pathToFileURL(join(root, "dist", rel.replace(/\.ts$/, ".js"))).href : pathToFileURL(source).href;
}
