/**
 * The trace viewer (issue 17): a page at `/`, its static assets under
 * `/viewer/`, and a JSON API under `/api/viewer/` over the same store.
 *
 *   router.add(viewerRoutes(store));
 *
 * The page and assets hold no run data, so they may be served without the API
 * key (the page shows a sign-in form); every `/api/viewer/` route needs the key
 * like the rest of the collector. Run content is rendered by the browser code
 * as text nodes only, under a Content-Security-Policy that allows scripts from
 * this origin alone.
 */
import { z } from "zod";
import { zodIssues } from "../../errors.js";
import { HttpError, type Reply, type Route } from "../http.js";
import { CursorError } from "../../store/contract/cursor.js";
import type { AttachmentStore } from "../../store/contract/attachments.js";
import type { ProjectStore } from "../../store/contract/projects.js";
import type { RunStore } from "../../store/contract/runs.js";
import type { TraceStore } from "../../store/contract/traces.js";
import { asset, ASSET_NAMES } from "./assets.js";

/**
 * No inline script or style, nothing from another origin. Images and media
 * only from data:/blob: URLs the page builds from base64 in the run: a run's
 * own image URL is never fetched (it would tell a third party who looks at the
 * trace, and when); the page shows it as a link instead.
 */
export const VIEWER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src data: blob:",
  "media-src data: blob:",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": VIEWER_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/** The page and its assets: public (no run data), so the sign-in form can load without a key. */
export function isViewerAsset(method: string, path: string): boolean {
  if (method !== "GET" && method !== "HEAD") return false;
  return path === "/" || (path.startsWith("/viewer/") && ASSET_NAMES.has(path.slice("/viewer/".length)));
}

/**
 * Every path the viewer serves. They are local reads for a person at a browser, not SPEC
 * endpoints: SPEC §8's per-IP catch-all (100 / 60 s) would otherwise cut off a viewer
 * that polls and loads its assets without an API key.
 */
export function isViewerPath(path: string): boolean {
  return path === "/" || path.startsWith("/viewer/") || path.startsWith("/api/viewer/");
}

const optionalTime = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), "an ISO 8601 time")
  .optional();

const TracesQuery = z.strictObject({
  project: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  run_type: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  provider: z.string().min(1).optional(),
  errors_only: z.enum(["true", "false", "1", "0"]).optional(),
  q: z.string().min(1).optional(),
  start_time_gte: optionalTime,
  start_time_lt: optionalTime,
  min_cost: z.coerce.number().finite().nonnegative().optional(),
  max_cost: z.coerce.number().finite().nonnegative().optional(),
  sort: z.enum(["start_time", "latency", "cost"]).optional(),
  order: z.enum(["asc", "desc"]).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z.string().min(1).optional(),
});

function queryObject(q: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of q) if (v !== "") out[k] = v;
  return out;
}

function page(body: Buffer, contentType: string): Reply {
  return { status: 200, body, headers: { "content-type": contentType, ...SECURITY_HEADERS } };
}

function json(body: unknown): Reply {
  return { status: 200, body, headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" } };
}

export function viewerRoutes(store: RunStore & TraceStore & ProjectStore & AttachmentStore): Route[] {
  return [
    { method: "GET", path: "/", handler: () => page(asset("index.html").data, "text/html; charset=utf-8") },
    {
      method: "GET",
      path: "/viewer/:file",
      handler: (ctx) => {
        const name = ctx.params.file!;
        if (!ASSET_NAMES.has(name)) throw new HttpError(404, `no viewer asset ${name}`);
        const a = asset(name);
        return page(a.data, a.contentType);
      },
    },
    { method: "GET", path: "/api/viewer/projects", handler: async () => json({ projects: await store.listProjects() }) },
    {
      method: "GET",
      path: "/api/viewer/traces",
      handler: async (ctx) => {
        const parsed = TracesQuery.safeParse(queryObject(ctx.query));
        if (!parsed.success) throw new HttpError(422, zodIssues(parsed.error.issues, ["query"]));
        const { errors_only, ...rest } = parsed.data;
        try {
          return json(await store.listTraces({ ...rest, errors_only: errors_only === "true" || errors_only === "1" }));
        } catch (err) {
          if (err instanceof CursorError) throw new HttpError(422, [{ loc: ["query", "cursor"], msg: err.message, type: "value_error" }]);
          throw err;
        }
      },
    },
    {
      method: "GET",
      path: "/api/viewer/traces/:id",
      handler: async (ctx) => {
        const runs = await store.traceRuns(ctx.params.id!);
        if (runs.length === 0) throw new HttpError(404, `trace ${ctx.params.id} not found`);
        return json({ trace_id: ctx.params.id, runs });
      },
    },
    {
      method: "GET",
      path: "/api/viewer/runs/:id",
      handler: async (ctx) => {
        const run = await store.getRun(ctx.params.id!);
        if (!run) throw new HttpError(404, `run ${ctx.params.id} not found`);
        return json({ ...run, attachments: await store.listAttachments(run.id) });
      },
    },
  ];
}
