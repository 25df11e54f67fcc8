/** Ingest endpoints: /info, /runs/multipart, /runs/batch, POST /runs, PATCH /runs/:id. */
import type { Route, RequestContext } from "../http.js";
import { HttpError } from "../http.js";
import type { Issue } from "../../errors.js";
import type { Run, RunPatch } from "../../run/schema.js";
import type { SqliteRunStore, StoredRun } from "../store/index.js";
import { decodedStream } from "../body.js";
import { parseMultipart } from "../multipart.js";
import { checkPatch, checkPost } from "../validation.js";

export interface IngestDeps {
  store: SqliteRunStore;
  version: string;
  maxBodyBytes: number;
  /** Batch bounds advertised to clients in GET /info. */
  batchSizeLimit: number;
  batchSizeBytesLimit: number;
  onRunCompleted?: (run: StoredRun) => void;
}

function reject422(issues: Issue[]): never {
  throw new HttpError(422, issues);
}

/** Store a validated batch and tell the hook about root runs that now have an end time. */
function store(deps: IngestDeps, post: Run[], patch: RunPatch[]): { created: number; updated: number } {
  const result = deps.store.ingest({ post, patch });
  if (deps.onRunCompleted) {
    const ids = new Set([...post.filter((r) => r.end_time).map((r) => r.id), ...patch.filter((r) => r.end_time).map((r) => r.id)]);
    for (const id of ids) {
      const run = deps.store.getRun(id);
      if (run && !run.parent_run_id && run.end_time) deps.onRunCompleted(run);
    }
  }
  return result;
}

export function ingestRoutes(deps: IngestDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/info",
      handler: () => ({
        status: 200,
        body: {
          version: deps.version,
          batch_ingest_config: {
            use_multipart_endpoint: true,
            size_limit: deps.batchSizeLimit,
            size_limit_bytes: deps.batchSizeBytesLimit,
            max_body_bytes: deps.maxBodyBytes,
            supports_gzip: true,
          },
        },
      }),
    },
    {
      method: "POST",
      path: "/runs/multipart",
      handler: async (ctx: RequestContext) => {
        const parsed = await parseMultipart(decodedStream(ctx.req, deps.maxBodyBytes), ctx.headers, deps.maxBodyBytes);
        const issues: Issue[] = [];
        const post: Run[] = [];
        const patch: RunPatch[] = [];
        for (const [id, r] of parsed.post) {
          const ok = checkPost(r, [`post.${id}`], issues);
          if (ok) post.push(ok);
        }
        for (const [id, r] of parsed.patch) {
          const ok = checkPatch(r, [`patch.${id}`], issues);
          if (ok) patch.push(ok);
        }
        if (issues.length) reject422(issues);
        // One transaction for the runs and their attachments: nothing half-written.
        const result = deps.store.db.transaction(() => {
          const r = store(deps, post, patch);
          for (const a of parsed.attachments) deps.store.putAttachment(a.runId, a.name, a.contentType, a.data, a.sha256);
          return r;
        })();
        return { status: 202, body: { ...result, attachments: parsed.attachments.length } };
      },
    },
    {
      method: "POST",
      path: "/runs/batch",
      handler: async (ctx) => {
        const body = await ctx.json();
        if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError(400, 'expected a JSON object {"post": [...], "patch": [...]}');
        const b = body as { post?: unknown; patch?: unknown };
        const issues: Issue[] = [];
        const post: Run[] = [];
        const patch: RunPatch[] = [];
        for (const [key, list, check, out] of [
          ["post", b.post, checkPost, post],
          ["patch", b.patch, checkPatch, patch],
        ] as const) {
          if (list === undefined || list === null) continue;
          if (!Array.isArray(list)) {
            issues.push({ loc: [key], msg: "expected an array", type: "list_type" });
            continue;
          }
          list.forEach((r, i) => {
            const ok = check(r, [key, i], issues);
            if (ok) (out as (Run | RunPatch)[]).push(ok);
          });
        }
        if (issues.length) reject422(issues);
        return { status: 202, body: store(deps, post, patch) };
      },
    },
    {
      method: "POST",
      path: "/runs",
      handler: async (ctx) => {
        const issues: Issue[] = [];
        const run = checkPost(await ctx.json(), [], issues);
        if (!run) reject422(issues);
        return { status: 202, body: store(deps, [run], []) };
      },
    },
    {
      method: "PATCH",
      path: "/runs/:id",
      handler: async (ctx) => {
        const body = await ctx.json();
        if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError(400, "expected a JSON object");
        const b = body as Record<string, unknown>;
        if (b.id !== undefined && b.id !== ctx.params.id) throw new HttpError(400, `body id ${JSON.stringify(b.id)} does not match the path id ${JSON.stringify(ctx.params.id)}`);
        const issues: Issue[] = [];
        const patch = checkPatch({ ...b, id: ctx.params.id }, [], issues);
        if (!patch) reject422(issues);
        return { status: 202, body: store(deps, [], [patch]) };
      },
    },
  ];
}
