/** Ingest endpoints: /info, /runs/multipart, /runs/batch, POST /runs, PATCH /runs/:id. */
import type { Route, RequestContext } from "../http.js";
import { HttpError } from "../http.js";
import { ValidationError } from "../../errors.js";
import type { IngestBatch, RunStore, StoredRun } from "../../store/index.js";
import { decodedStream } from "../body.js";
import { parseMultipart } from "../multipart.js";

export interface IngestDeps {
  store: RunStore;
  version: string;
  maxBodyBytes: number;
  /** Batch bounds advertised to clients in GET /info. */
  batchSizeLimit: number;
  batchSizeBytesLimit: number;
  onRunCompleted?: (run: StoredRun) => void;
}

/**
 * The store's one ingest operation (validate -> merge -> derive -> store): an
 * invalid record is a 422 listing every problem, and nothing is stored. Root
 * runs that now have an end time are handed to the completion hook.
 */
async function store(deps: IngestDeps, batch: IngestBatch): Promise<{ created: number; updated: number; attachments: number }> {
  let result;
  try {
    result = await deps.store.ingest(batch);
  } catch (err) {
    if (err instanceof ValidationError) throw new HttpError(422, err.issues);
    throw err;
  }
  if (deps.onRunCompleted) {
    for (const id of result.completedRoots) {
      const run = deps.store.getRun(id);
      if (run) deps.onRunCompleted(run);
    }
  }
  return { created: result.created, updated: result.updated, attachments: result.attachments };
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
        const post = [...parsed.post];
        const patch = [...parsed.patch];
        // One transaction for the runs and their attachments: nothing half-written.
        const body = await store(deps, {
          post: post.map(([, r]) => r),
          patch: patch.map(([, r]) => r),
          attachments: parsed.attachments,
          locate: (kind, i) => [`${kind}.${(kind === "post" ? post : patch)[i]![0]}`],
        });
        return { status: 202, body };
      },
    },
    {
      method: "POST",
      path: "/runs/batch",
      handler: async (ctx) => {
        const body = await ctx.json();
        if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError(400, 'expected a JSON object {"post": [...], "patch": [...]}');
        const b = body as { post?: unknown; patch?: unknown };
        for (const key of ["post", "patch"] as const) {
          const list = b[key];
          if (list !== undefined && list !== null && !Array.isArray(list)) throw new HttpError(422, [{ loc: [key], msg: "expected an array", type: "list_type" }]);
        }
        const { created, updated } = await store(deps, { post: (b.post ?? []) as unknown[], patch: (b.patch ?? []) as unknown[] });
        return { status: 202, body: { created, updated } };
      },
    },
    {
      method: "POST",
      path: "/runs",
      handler: async (ctx) => {
        const { created, updated } = await store(deps, { post: [await ctx.json()], locate: () => [] });
        return { status: 202, body: { created, updated } };
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
        const { created, updated } = await store(deps, { patch: [{ ...b, id: ctx.params.id }], locate: () => [] });
        return { status: 202, body: { created, updated } };
      },
    },
  ];
}
