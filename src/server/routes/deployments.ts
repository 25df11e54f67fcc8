/**
 * The deployment control plane (SPEC §4.1–4.2): POST /v2/deployments,
 * GET and PATCH /v2/deployments/{id}, GET /v2/deployments/{id}/revisions/{revision_id}.
 * Shape errors are 422 with SPEC §7's ValidationError list, rule violations
 * 400 with a `detail` string, unknown ids 404 naming the id. Fields accepted
 * but not to be used come back as a `Warning` header.
 */
import { z } from "zod";
import { ValidationError } from "../../errors.js";
import { ControlPlane, NotFoundError } from "../../control/service.js";
import { RuleError } from "../../control/rules.js";
import type { Reply, Route } from "../http.js";
import { HttpError } from "../http-error.js";

const Uuid = z.uuid();

function uuidParam(value: string | undefined, name: string): string {
  if (!Uuid.safeParse(value).success) throw new HttpError(422, [{ loc: ["path", name], msg: "must be a UUID", type: "uuid_parsing" }]);
  // A UUID's hex digits are case-insensitive; ids are minted and stored in lower case.
  return value!.toLowerCase();
}

async function answer(fn: () => Promise<unknown>, wrapped = false): Promise<Reply> {
  try {
    const out = await fn();
    if (!wrapped) return { status: 200, body: out };
    const { value, warnings } = out as { value: unknown; warnings: string[] };
    return {
      status: 200,
      body: value,
      headers: warnings.length ? { warning: warnings.map((w) => `299 tracepipe ${JSON.stringify(w)}`).join(", ") } : undefined,
    };
  } catch (err) {
    if (err instanceof ValidationError) throw new HttpError(422, err.issues);
    if (err instanceof RuleError || err instanceof NotFoundError) throw new HttpError(err.status, err.message);
    throw err;
  }
}

export function deploymentRoutes(cp: ControlPlane): Route[] {
  return [
    {
      method: "POST",
      path: "/v2/deployments",
      handler: async (ctx) => {
        const body = await ctx.json();
        return answer(() => cp.create(body), true);
      },
    },
    { method: "GET", path: "/v2/deployments/:id", handler: (ctx) => answer(() => cp.get(uuidParam(ctx.params.id, "deployment_id"))) },
    {
      method: "PATCH",
      path: "/v2/deployments/:id",
      handler: async (ctx) => {
        const id = uuidParam(ctx.params.id, "deployment_id");
        const body = await ctx.json();
        return answer(() => cp.patch(id, body), true);
      },
    },
    {
      method: "GET",
      path: "/v2/deployments/:id/revisions/:revision_id",
      handler: (ctx) =>
        answer(() => cp.getRevision(uuidParam(ctx.params.id, "deployment_id"), uuidParam(ctx.params.revision_id, "revision_id"))),
    },
  ];
}
