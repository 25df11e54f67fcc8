/** Read endpoints: GET /runs/:id, POST /runs/query, DELETE /sessions. */
import { zodIssues } from "../../errors.js";
import { z } from "zod";
import type { Route } from "../http.js";
import { HttpError } from "../http-error.js";
import type { AttachmentStore } from "../../store/contract/attachments.js";
import type { ProjectStore } from "../../store/contract/projects.js";
import type { RunStore } from "../../store/contract/runs.js";
import { canonicalTime } from "../../store/time.js";

/** A time the store can compare: it compares times as text, so one it cannot read would match nothing (or everything) silently. */
const Time = z.string().refine((s) => canonicalTime(s) !== undefined, "must be a time such as 2026-11-20T10:00:00Z");

const Query = z.strictObject({
  trace_id: z.string().optional(),
  project: z.string().optional(),
  run_type: z.string().optional(),
  start_time_gte: Time.optional(),
  start_time_lt: Time.optional(),
  /** Runs whose metadata has each key with this value; values compare as text (3 matches "3"). */
  metadata: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()]).transform(String)).optional(),
  /** Runs carrying every one of these tags. */
  tags: z.array(z.string().min(1)).max(50).optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  cursor: z.string().nullable().optional(),
});

export function queryRoutes(store: RunStore & AttachmentStore & ProjectStore): Route[] {
  return [
    {
      method: "GET",
      path: "/runs/:id",
      handler: async (ctx) => {
        const run = await store.getRun(ctx.params.id!);
        if (!run) throw new HttpError(404, `run ${ctx.params.id} not found`);
        return { status: 200, body: { ...run, attachments: await store.listAttachments(run.id) } };
      },
    },
    {
      method: "POST",
      path: "/runs/query",
      handler: async (ctx) => {
        const parsed = Query.safeParse(await ctx.json());
        if (!parsed.success) throw new HttpError(422, zodIssues(parsed.error.issues));
        try {
          return { status: 200, body: await store.queryRuns(parsed.data) };
        } catch (err) {
          if (err instanceof RangeError) throw new HttpError(422, [{ loc: ["cursor"], msg: err.message, type: "value_error" }]);
          throw err;
        }
      },
    },
    {
      method: "DELETE",
      path: "/sessions",
      handler: async (ctx) => {
        let name = ctx.query.get("name") ?? ctx.query.get("project");
        if (!name) {
          const body = (await ctx.body()).length ? ((await ctx.json()) as { name?: unknown }) : {};
          if (typeof body?.name === "string") name = body.name;
        }
        if (!name) throw new HttpError(422, [{ loc: ["query", "name"], msg: "the project name is required (?name=...)", type: "missing" }]);
        return { status: 200, body: { deleted_runs: await store.deleteProject(name), name } };
      },
    },
  ];
}
