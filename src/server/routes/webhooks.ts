/**
 * POST /webhooks/runs?token=... : run-completion webhooks from an agent server
 * (SPEC §5–6) become trace runs. The token is compared in constant time; a
 * missing or wrong token is 401 and stores nothing.
 */
import { ValidationError } from "../../errors.js";
import { agentRunToTraceRun } from "../../webhooks/runs.js";
import type { RunStore } from "../../store/contract/runs.js";
import { HttpError, secretMatches, type Route } from "../http.js";

export function webhookReceiverRoutes(store: RunStore, token: string, project = "agent-server"): Route[] {
  return [
    {
      method: "POST",
      path: "/webhooks/runs",
      handler: async (ctx) => {
        const given = ctx.query.get("token");
        if (!given || !secretMatches(given, token)) throw new HttpError(401, "missing or invalid webhook token (?token=...)");
        const body = await ctx.json();
        let run;
        try {
          run = agentRunToTraceRun(body, ctx.query.get("project") ?? project);
        } catch (err) {
          if (err instanceof ValidationError) throw new HttpError(422, err.issues);
          throw err;
        }
        await store.ingest({ post: [run] });
        return { status: 200, body: { run_id: run.id } };
      },
    },
  ];
}
