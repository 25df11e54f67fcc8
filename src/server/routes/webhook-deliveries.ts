/**
 * GET /runs/:id/webhooks: a run's outbound webhook deliveries from the store's
 * outbox, each with its status (pending, delivered, failed) and every attempt
 * (time, status code or error, duration). docs/webhooks.md.
 */
import type { Route } from "../http.js";
import { HttpError } from "../http-error.js";
import type { RunStore } from "../../store/contract/runs.js";
import type { WebhookOutboxStore } from "../../store/contract/webhooks.js";

export function webhookDeliveryRoutes(store: Pick<RunStore, "getRun"> & Pick<WebhookOutboxStore, "webhookDeliveries">): Route[] {
  return [
    {
      method: "GET",
      path: "/runs/:id/webhooks",
      handler: async (ctx) => {
        const id = ctx.params.id!;
        const deliveries = await store.webhookDeliveries(id);
        // A delivery outlives nothing it belongs to: no run and no delivery is an unknown run.
        if (!deliveries.length && !(await store.getRun(id))) throw new HttpError(404, `run ${id} not found`);
        return { status: 200, body: { run_id: id, deliveries } };
      },
    },
  ];
}
