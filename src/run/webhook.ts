/** Where a run asked its completion webhook to go: `extra.metadata.webhook` (the store's outbox and the sender read it alike). */
import { isObj } from "../internal/obj.js";

/** The webhook URL a run (or its `extra`) names, or undefined. */
export function webhookUrlOf(run: { extra?: unknown }): string | undefined {
  const md = isObj(run.extra) && isObj(run.extra.metadata) ? run.extra.metadata : undefined;
  return typeof md?.webhook === "string" && md.webhook ? md.webhook : undefined;
}
