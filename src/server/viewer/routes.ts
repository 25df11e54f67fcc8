/**
 * The trace viewer: a page at `/`, its static assets under
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
import type { Reply, Route } from "../http.js";
import { HttpError } from "../http-error.js";
import { CursorError } from "../../store/contract/cursor.js";
import { MAX_TRACE_PAGE } from "../../store/paging.js";
import type { AttachmentStore } from "../../store/contract/attachments.js";
import type { ProjectStore } from "../../store/contract/projects.js";
import type { RunStore } from "../../store/contract/runs.js";
import type { WebhookOutboxStore } from "../../store/contract/webhooks.js";
import type { TraceStore } from "../../store/contract/traces.js";
import type { LogStore, StoredLog } from "../../store/contract/logs.js";
import type { FeedbackStore } from "../../store/contract/feedback.js";
import type { ThreadStore } from "../../store/contract/threads.js";
import type { Breakdown, MonitorQuery, MonitorStore } from "../../store/contract/monitor.js";
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
  feedback_key: z.string().min(1).optional(),
  sort: z.enum(["start_time", "latency", "cost"]).optional(),
  order: z.enum(["asc", "desc"]).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_TRACE_PAGE).optional(),
  cursor: z.string().min(1).optional(),
});

/** Repeatable parameters, read apart from the rest: `metadata=key=value` (each), `tag=name` (each). */
const REPEATED = new Set(["metadata", "tag"]);

function queryObject(q: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of q) if (v !== "" && !REPEATED.has(k)) out[k] = v;
  return out;
}

/** `metadata=key=value` parameters as {key: value}; the first `=` splits (values may hold more). */
function metadataParams(q: URLSearchParams): Record<string, string> | undefined {
  const all = q.getAll("metadata").filter((v) => v !== "");
  if (!all.length) return undefined;
  const out: Record<string, string> = {};
  all.forEach((v, i) => {
    const eq = v.indexOf("=");
    if (eq <= 0)
      throw new HttpError(422, [
        { loc: ["query", "metadata", i], msg: `expected key=value, got ${JSON.stringify(v.slice(0, 80))}`, type: "value_error" },
      ]);
    out[v.slice(0, eq).trim()] = v.slice(eq + 1).trim();
  });
  return out;
}

const RANGE_MS = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 } as const;
const BUCKET_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
/** Most buckets a chart may have; `auto` picks the smallest named bucket that stays under 200. */
const MAX_BUCKETS = 2000;

const MonitorParams = z.strictObject({
  project: z.string().min(1),
  range: z.enum(["hour", "day", "week", "custom"]).optional(),
  from: optionalTime,
  to: optionalTime,
  bucket: z.enum(["auto", "minute", "hour", "day"]).optional(),
  by: z.enum(["model", "provider", "name"]).optional(),
});

/** The range and bucket a monitoring request names, as epoch ms: 422 naming the field when they do not make a chart. */
function monitorQuery(q: URLSearchParams, now = Date.now()): MonitorQuery & { by?: Breakdown } {
  const parsed = MonitorParams.safeParse(queryObject(q));
  if (!parsed.success) throw new HttpError(422, zodIssues(parsed.error.issues, ["query"]));
  const p = parsed.data;
  let from: number;
  let to: number;
  if ((p.range ?? "day") === "custom" || p.from || p.to) {
    if (!p.from || !p.to)
      throw new HttpError(422, [{ loc: ["query", p.from ? "to" : "from"], msg: "a custom range needs both from and to", type: "missing" }]);
    from = Date.parse(p.from);
    to = Date.parse(p.to);
    if (to <= from) throw new HttpError(422, [{ loc: ["query", "to"], msg: "to must be after from", type: "value_error" }]);
  } else {
    to = now;
    from = now - RANGE_MS[p.range as keyof typeof RANGE_MS];
  }
  const span = to - from;
  const step =
    !p.bucket || p.bucket === "auto"
      ? span / BUCKET_MS.minute <= 200
        ? BUCKET_MS.minute
        : span / BUCKET_MS.hour <= 200
          ? BUCKET_MS.hour
          : BUCKET_MS.day
      : BUCKET_MS[p.bucket];
  // Buckets start on whole minutes / hours / days (UTC), so they read as times on the axis.
  from = Math.floor(from / step) * step;
  if (Math.ceil((to - from) / step) > MAX_BUCKETS)
    throw new HttpError(422, [
      { loc: ["query", "bucket"], msg: `more than ${MAX_BUCKETS} buckets; choose a larger bucket or a shorter range`, type: "value_error" },
    ]);
  return { project: p.project, from_ms: from, to_ms: to, step_ms: step, by: p.by };
}

const ThreadsQuery = z.strictObject({
  project: z.string().min(1).optional(),
  before: optionalTime,
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z.string().min(1).optional(),
});

function page(body: Buffer, contentType: string): Reply {
  return { status: 200, body, headers: { "content-type": contentType, ...SECURITY_HEADERS } };
}

function json(body: unknown): Reply {
  return { status: 200, body, headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" } };
}

const OTEL_TRACE_ID = /^[0-9a-f]{32}$/;

/** A staged log record as the trace page shows it: its JSON columns as values. */
function logView(l: StoredLog) {
  const value = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  return {
    time: l.time,
    span_id: l.span_id || null,
    event_name: l.event_name || null,
    severity: l.severity,
    body: value(l.body),
    attributes: value(l.attributes),
    scope: value(l.scope),
  };
}

export function viewerRoutes(
  store: RunStore &
    TraceStore &
    ProjectStore &
    AttachmentStore &
    FeedbackStore &
    ThreadStore &
    MonitorStore &
    LogStore &
    WebhookOutboxStore,
): Route[] {
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
        const metadata = metadataParams(ctx.query);
        const tags = ctx.query.getAll("tag").filter((t) => t !== "");
        try {
          return json(
            await store.listTraces({
              ...rest,
              metadata,
              tags: tags.length ? tags : undefined,
              errors_only: errors_only === "true" || errors_only === "1",
            }),
          );
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
        const id = ctx.params.id!;
        const runs = await store.traceRuns(id);
        if (runs.length > 0) return json({ trace_id: id, runs, feedback: await store.feedbackOf(runs.map((r) => r.id)), logs: [] });
        // OTLP log records whose trace made no run (no span came, or none an adapter read) are
        // stored under their OpenTelemetry trace id: that id shows them.
        const logs = OTEL_TRACE_ID.test(id) ? await store.logsOfTrace(id) : [];
        if (logs.length === 0) throw new HttpError(404, `trace ${id} not found`);
        return json({ trace_id: id, runs: [], feedback: [], logs: logs.map(logView) });
      },
    },
    {
      method: "GET",
      path: "/api/viewer/runs/:id",
      handler: async (ctx) => {
        const run = await store.getRun(ctx.params.id!);
        if (!run) throw new HttpError(404, `run ${ctx.params.id} not found`);
        return json({
          ...run,
          attachments: await store.listAttachments(run.id),
          feedback: await store.feedbackOf([run.id]),
          webhooks: await store.webhookDeliveries(run.id),
        });
      },
    },
    {
      method: "GET",
      path: "/api/viewer/threads",
      handler: async (ctx) => {
        const parsed = ThreadsQuery.safeParse(queryObject(ctx.query));
        if (!parsed.success) throw new HttpError(422, zodIssues(parsed.error.issues, ["query"]));
        try {
          return json(await store.listThreads(parsed.data));
        } catch (err) {
          if (err instanceof CursorError) throw new HttpError(422, [{ loc: ["query", "cursor"], msg: err.message, type: "value_error" }]);
          throw err;
        }
      },
    },
    {
      method: "GET",
      path: "/api/viewer/threads/:id",
      handler: async (ctx) => {
        const project = ctx.query.get("project") || undefined;
        const turns = await store.threadTurns(ctx.params.id!, project);
        if (turns.length === 0) throw new HttpError(404, `thread ${ctx.params.id} not found`);
        return json({ thread_id: ctx.params.id, turns });
      },
    },
    {
      method: "GET",
      path: "/api/viewer/monitor",
      handler: async (ctx) => json(await store.monitorSeries(monitorQuery(ctx.query))),
    },
    {
      method: "GET",
      path: "/api/viewer/monitor/breakdown",
      handler: async (ctx) => {
        const q = monitorQuery(ctx.query);
        const by = q.by ?? "model";
        return json({ by, rows: await store.monitorBreakdown(q, by) });
      },
    },
  ];
}
