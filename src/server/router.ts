/** Dispatch on method and `:name` path patterns (src/server/http.ts's Route contract). */
import type { Handler, Route } from "./http.js";

interface Compiled {
  method: string;
  parts: string[];
  handler: Handler;
}

export class Router {
  private readonly routes: Compiled[] = [];

  add(routes: readonly Route[]): this {
    for (const r of routes) this.routes.push({ method: r.method, parts: split(r.path), handler: r.handler });
    return this;
  }

  /** The handler and its params, or which methods the path allows (for 405), or nothing (404). */
  match(method: string, path: string): { handler: Handler; params: Record<string, string> } | { allowed: string[] } | undefined {
    const segs = split(path);
    const allowed: string[] = [];
    for (const r of this.routes) {
      const params = matchParts(r.parts, segs);
      if (!params) continue;
      if (r.method === method) return { handler: r.handler, params };
      allowed.push(r.method);
    }
    return allowed.length ? { allowed } : undefined;
  }
}

function split(path: string): string[] {
  return path.split("/").filter((s) => s !== "");
}

function matchParts(pattern: string[], segs: string[]): Record<string, string> | undefined {
  if (pattern.length !== segs.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const s = segs[i]!;
    if (p.startsWith(":")) {
      try {
        params[p.slice(1)] = decodeURIComponent(s);
      } catch {
        return undefined;
      }
    } else if (p !== s) return undefined;
  }
  return params;
}
