/** Ingest endpoints: /info, /runs/multipart, /runs/batch, POST /runs, PATCH /runs/:id. */
import type { Route, RequestContext } from "../http.js";
import { HttpError } from "../http.js";
import type { Run, RunPatch } from "../../run/schema.js";
import type { SqliteRunStore, StoredRun } from "../store/index.js";
import { parseMultipart } from "../multipart.js";
import { checkPatch, checkPost, Slicer } from "../validation.js";
import { IssueList } from "../issues.js";
import { depthIssue, tooDeep } from "../depth.js";
import type { CollectorLimits } from "../limits.js";

export interface IngestDeps {
  store: SqliteRunStore;
  version: string;
  limits: CollectorLimits;
  /** Told about root runs that now have an end time; when absent, nothing is read back after storing. */
  onRunCompleted?: (run: StoredRun) => void;
}

/** What /info advertises, enforced: the run count always, the byte size when there is more than one run to split. */
function checkBatch(limits: CollectorLimits, runs: number, bytes: number): void {
  if (runs > limits.batchSizeLimit) throw new HttpError(413, `${runs} runs in one request, over the limit of ${limits.batchSizeLimit} (GET /info batch_ingest_config.size_limit); split the batch`);
  if (runs > 1 && bytes > limits.batchSizeBytesLimit) {
    throw new HttpError(413, `a batch of ${runs} runs in ${bytes} bytes, over the limit of ${limits.batchSizeBytesLimit} bytes (GET /info batch_ingest_config.size_limit_bytes); split the batch`);
  }
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
            size_limit: deps.limits.batchSizeLimit,
            size_limit_bytes: deps.limits.batchSizeBytesLimit,
            max_body_bytes: deps.limits.maxBodyBytes,
            max_json_depth: deps.limits.maxJsonDepth,
            supports_gzip: true,
          },
        },
      }),
    },
    {
      method: "POST",
      path: "/runs/multipart",
      handler: async (ctx: RequestContext) => {
        const { limits } = deps;
        const issues = new IssueList(limits.maxListedIssues, limits.maxCountedIssues);
        const body = ctx.stream();
        const parsed = await parseMultipart(body, ctx.headers, { maxPartBytes: limits.maxBodyBytes, maxParts: limits.maxMultipartParts, maxRuns: limits.batchSizeLimit }, issues);
        checkBatch(limits, parsed.post.size + parsed.patch.size, body.bytes);
        const slicer = new Slicer();
        // Depth first: zod and the store recurse, so nothing too deep may reach them.
        let tooDeepFound = false;
        for (const d of parsed.documents) {
          const deep = await tooDeep(d.value, limits.maxJsonDepth, slicer);
          if (deep) issues.push(depthIssue([d.part, ...deep], limits.maxJsonDepth));
          tooDeepFound ||= deep !== undefined;
        }
        if (tooDeepFound) issues.fail();
        const post: Run[] = [];
        const patch: RunPatch[] = [];
        for (const [id, r] of parsed.post) {
          if (issues.full) break;
          const ok = await checkPost(r, [`post.${id}`], issues, slicer);
          if (ok) post.push(ok);
        }
        for (const [id, r] of parsed.patch) {
          if (issues.full) break;
          const ok = await checkPatch(r, [`patch.${id}`], issues, slicer);
          if (ok) patch.push(ok);
        }
        issues.throwIfAny();
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
        const raw = await ctx.body();
        const body = await ctx.parse(raw);
        if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError(400, 'expected a JSON object {"post": [...], "patch": [...]}');
        const b = body as { post?: unknown; patch?: unknown };
        const issues = new IssueList(deps.limits.maxListedIssues, deps.limits.maxCountedIssues);
        const slicer = new Slicer();
        const post: Run[] = [];
        const patch: RunPatch[] = [];
        const lists = [
          ["post", b.post],
          ["patch", b.patch],
        ] as const;
        checkBatch(deps.limits, lists.reduce((n, [, l]) => n + (Array.isArray(l) ? l.length : 0), 0), raw.length);
        for (const [key, list] of lists) {
          if (list === undefined || list === null) continue;
          if (!Array.isArray(list)) {
            issues.push({ loc: [key], msg: "expected an array", type: "list_type" });
            continue;
          }
          for (let i = 0; i < list.length && !issues.full; i++) {
            if (key === "post") {
              const ok = await checkPost(list[i], [key, i], issues, slicer);
              if (ok) post.push(ok);
            } else {
              const ok = await checkPatch(list[i], [key, i], issues, slicer);
              if (ok) patch.push(ok);
            }
          }
        }
        issues.throwIfAny();
        return { status: 202, body: store(deps, post, patch) };
      },
    },
    {
      method: "POST",
      path: "/runs",
      handler: async (ctx) => {
        const issues = new IssueList(deps.limits.maxListedIssues, deps.limits.maxCountedIssues);
        const run = await checkPost(await ctx.json(), [], issues, new Slicer());
        if (!run) return issues.fail();
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
        const issues = new IssueList(deps.limits.maxListedIssues, deps.limits.maxCountedIssues);
        const patch = await checkPatch({ ...b, id: ctx.params.id }, [], issues, new Slicer());
        if (!patch) return issues.fail();
        return { status: 202, body: store(deps, [], [patch]) };
      },
    },
  ];
}
