/**
 * What happens when a root run completes in the collector: the caller's own
 * hook, then one POST to the webhook the run asked for (`extra.metadata.webhook`),
 * once per run however often the run is completed again.
 */
import type { Run } from "../run/schema.js";
import type { WebhookSender } from "./sender.js";
import { webhookPayload, webhookUrlOf } from "./runs.js";

export interface CompletionOptions<R extends Run> {
  /** Called first, for every completed root run. Must not throw; must not block. */
  onRunCompleted?: (run: R) => void;
  /** Sends the run's webhook, when it asked for one. */
  sender?: WebhookSender;
}

/** The completion hook, or undefined when there is nothing to do on completion. */
export function completionHook<R extends Run>(o: CompletionOptions<R>): ((run: R) => void) | undefined {
  const { onRunCompleted, sender } = o;
  if (!onRunCompleted && !sender) return undefined;
  const notified = new Set<string>();
  return (run) => {
    onRunCompleted?.(run);
    const url = sender && webhookUrlOf(run);
    if (url && !notified.has(run.id)) {
      notified.add(run.id);
      sender.send(url, webhookPayload(run));
    }
  };
}
