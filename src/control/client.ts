/**
 * A typed client for the deployment control plane (SPEC §4): the collector's
 * endpoints, or any service that implements them.
 *
 *   const deployments = new Deployments({ endpoint, apiKey });
 *   const d = await deployments.create({ name: "agent", source: "external_docker", ... });
 *   await deployments.waitForRevision(d.id, d.latest_revision_id!);
 *
 * Errors: 422 -> ValidationError (its issues are SPEC §7's list); other
 * non-2xx -> ControlPlaneError with `status` and the server's `detail`.
 */
import { envValue } from "../env.js";
import { ConfigError, TracepipeError, ValidationError, type Issue } from "../errors.js";
import { sleep } from "../internal/sleep.js";
import type { Deployment, DeploymentCreateRequest, DeploymentPatchRequest, Revision } from "./schema.js";

export class ControlPlaneError extends TracepipeError {
  override name = "ControlPlaneError";
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path}: HTTP ${status}${typeof detail === "string" ? ` ${detail}` : ""}`);
  }
}

export interface DeploymentsOptions {
  endpoint?: string;
  apiKey?: string;
  /** Per-request timeout, ms. Default 30 s. */
  timeoutMs?: number;
}

export interface WaitOptions {
  /** Give up after this long, ms. Default 10 min. */
  timeoutMs?: number;
  /** First poll interval, ms; it doubles up to `maxIntervalMs`. Default 500. */
  intervalMs?: number;
  maxIntervalMs?: number;
  signal?: AbortSignal;
  /** Called with each revision seen while waiting. */
  onPoll?: (r: Revision) => void;
}

export interface Result<T> {
  value: T;
  /** `Warning` headers: fields accepted but not to be used. */
  warnings: string[];
}

export class Deployments {
  private readonly base: string;
  private readonly apiKey?: string;
  private readonly timeoutMs: number;

  constructor(o: DeploymentsOptions = {}) {
    const endpoint = o.endpoint ?? envValue("TRACEPIPE_ENDPOINT");
    if (!endpoint)
      throw new ConfigError([{ loc: ["endpoint"], msg: "no endpoint: pass {endpoint} or set TRACEPIPE_ENDPOINT", type: "missing" }]);
    this.base = endpoint.replace(/\/+$/, "");
    this.apiKey = o.apiKey ?? envValue("TRACEPIPE_API_KEY");
    this.timeoutMs = o.timeoutMs ?? 30_000;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<Result<T>> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.apiKey) headers["x-api-key"] = this.apiKey;
    const res = await fetch(this.base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = text;
    }
    if (!res.ok) {
      const detail = (json as { detail?: unknown } | undefined)?.detail ?? json;
      if (res.status === 422 && Array.isArray(detail)) throw new ValidationError(detail as Issue[]);
      throw new ControlPlaneError(res.status, detail, method, path);
    }
    const warning = res.headers.get("warning");
    const warnings = warning ? [...warning.matchAll(/299 \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string) : [];
    return { value: json as T, warnings };
  }

  async create(body: DeploymentCreateRequest): Promise<Deployment> {
    return (await this.call<Deployment>("POST", "/v2/deployments", body)).value;
  }

  async get(id: string): Promise<Deployment> {
    return (await this.call<Deployment>("GET", `/v2/deployments/${encodeURIComponent(id)}`)).value;
  }

  async patch(id: string, body: DeploymentPatchRequest): Promise<Deployment> {
    return (await this.patchWithWarnings(id, body)).value;
  }

  patchWithWarnings(id: string, body: DeploymentPatchRequest): Promise<Result<Deployment>> {
    return this.call<Deployment>("PATCH", `/v2/deployments/${encodeURIComponent(id)}`, body);
  }

  async getRevision(id: string, revisionId: string): Promise<Revision> {
    return (await this.call<Revision>("GET", `/v2/deployments/${encodeURIComponent(id)}/revisions/${encodeURIComponent(revisionId)}`))
      .value;
  }

  /** Poll the revision until it is DEPLOYED, backing off; a TracepipeError on timeout. */
  async waitForRevision(id: string, revisionId: string, o: WaitOptions = {}): Promise<Revision> {
    const deadline = Date.now() + (o.timeoutMs ?? 600_000);
    let interval = o.intervalMs ?? 500;
    for (;;) {
      const r = await this.getRevision(id, revisionId);
      o.onPoll?.(r);
      if (r.status === "DEPLOYED") return r;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new TracepipeError(
          `revision ${revisionId} of deployment ${id} was not DEPLOYED within ${o.timeoutMs ?? 600_000} ms (last status ${r.status})`,
        );
      await sleep(Math.min(interval, left), o.signal);
      interval = Math.min(interval * 2, o.maxIntervalMs ?? 10_000);
    }
  }
}
