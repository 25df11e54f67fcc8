/**
 * Before a backfill sends anything: is the API key accepted? A 401 or 403 is
 * a configuration error, not a bad record, so it must stop the run before the
 * client turns every batch into a dead letter. The probe is an empty batch
 * (`POST /runs/batch` with no runs): authenticated like every write, and it
 * stores nothing. Anything but 401/403 (including no answer) is left to the
 * client, which retries, spools and reports as usual.
 */
import { ConfigError } from "../errors.js";

export async function checkAccess(endpoint: string, apiKey: string | undefined, timeoutMs = 10_000): Promise<void> {
  const url = `${endpoint.replace(/\/+$/, "")}/runs/batch`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(apiKey ? { "x-api-key": apiKey } : {}) },
      body: JSON.stringify({ post: [], patch: [] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch {
    return; // unreachable now: the client's retries and spool deal with outages
  }
  let detail = "";
  try {
    const body = (await res.json()) as { detail?: unknown };
    if (body.detail !== undefined) detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
  } catch {
    // no JSON body
  }
  if (res.status !== 401 && res.status !== 403) return;
  const what = apiKey ? "the API key was refused" : "the endpoint needs an API key and none was given";
  throw new ConfigError([
    {
      loc: ["api_key"],
      msg: `${endpoint}: ${what} (HTTP ${res.status}${detail ? `: ${detail}` : ""}); set --api-key or TRACEPIPE_API_KEY. Nothing was sent.`,
      type: res.status === 401 ? "unauthorized" : "forbidden",
    },
  ]);
}
