/**
 * The deployment control plane over the collector's store: create, read and
 * PATCH deployments, with revisions per SPEC §3. Builds are simulated: a
 * revision is QUEUED, then BUILDING, then DEPLOYED after `buildMs`, so a
 * client has something to poll. Status is derived from the clock on read, so
 * nothing runs in the background.
 */
import { TracepipeError } from "../errors.js";
import type { DeploymentStore, RevisionRecord } from "../store/contract/deployments.js";
import type { Obj } from "../internal/obj.js";
import { stableUuid, uuidv7 } from "../run/ids.js";
import {
  checkCreationOnly,
  checkImmutable,
  checkResourceSpec,
  checkSourceFields,
  checkTagBuildOnPush,
  doNotUseWarnings,
  parseBody,
  RuleError,
  triggersRevision,
  withDefaults,
} from "./rules.js";
import {
  DeploymentCreateRequest,
  DeploymentPatchRequest,
  type Deployment,
  type ResourceSpec,
  type Revision,
  type RevisionStatus,
} from "./schema.js";

export class NotFoundError extends TracepipeError {
  override name = "NotFoundError";
  readonly status = 404;
}

export interface ControlPlaneOptions {
  /** How long a simulated build takes, ms. Default 1500. */
  buildMs?: number;
  /** Owner tenant reported on deployments. */
  tenantId?: string;
  /** Called when a deployment is created (the collector creates the tracing project of its name). */
  onCreate?: (d: Deployment) => void | Promise<void>;
  now?: () => number;
}

export interface Outcome<T> {
  value: T;
  warnings: string[];
}

type StoredRevision = Omit<Revision, "status">;
type StoredDeployment = Omit<Deployment, "latest_revision_id" | "active_revision_id">;

const nonNull = (o: Record<string, unknown> | null | undefined): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined && v !== null));

export class ControlPlane {
  private readonly buildMs: number;
  private readonly tenantId: string;
  private readonly now: () => number;

  constructor(
    private readonly store: DeploymentStore,
    private readonly opts: ControlPlaneOptions = {},
  ) {
    this.buildMs = opts.buildMs ?? 1500;
    this.tenantId = opts.tenantId ?? stableUuid(["tracepipe-local-tenant"]);
    this.now = opts.now ?? Date.now;
  }

  private status(r: StoredRevision): RevisionStatus {
    const age = this.now() - Date.parse(r.created_at);
    return age >= this.buildMs ? "DEPLOYED" : age >= this.buildMs / 3 ? "BUILDING" : "QUEUED";
  }

  private async revisions(deploymentId: string): Promise<StoredRevision[]> {
    return (await this.store.listRevisions(deploymentId)).map((r) => r.body as unknown as StoredRevision);
  }

  /** The stored deployment with its derived fields (latest and active revision). */
  private async view(stored: StoredDeployment): Promise<Deployment> {
    const revs = await this.revisions(stored.id);
    const deployed = revs.filter((r) => this.status(r) === "DEPLOYED");
    return { ...stored, latest_revision_id: revs.at(-1)?.id ?? null, active_revision_id: deployed.at(-1)?.id ?? null };
  }

  private async load(id: string): Promise<StoredDeployment> {
    const row = await this.store.getDeployment(id);
    if (!row) throw new NotFoundError(`deployment ${id} not found`);
    return row.body as unknown as StoredDeployment;
  }

  /** The revision a deployment's current source makes, as stored. */
  private revisionOf(
    d: { id: string; source_revision_config: Record<string, unknown>; source_config: Record<string, unknown>; secrets: { name: string }[] },
    at: string,
  ): RevisionRecord {
    const rev: StoredRevision = {
      id: uuidv7(),
      deployment_id: d.id,
      created_at: at,
      source_revision_config: { ...d.source_revision_config },
      resource_spec: (d.source_config.resource_spec as Record<string, unknown> | undefined) ?? null,
      secrets: d.secrets.map((s) => s.name),
    };
    return { id: rev.id, deployment_id: d.id, body: rev as unknown as Obj, created_at: at };
  }

  async create(body: unknown): Promise<Outcome<Deployment>> {
    const req = parseBody(DeploymentCreateRequest, body);
    checkSourceFields(req.source, req.source_config, req.source_revision_config);
    const sc = nonNull(req.source_config as Record<string, unknown>);
    const src = nonNull(req.source_revision_config as Record<string, unknown>);
    checkTagBuildOnPush(src.repo_ref, sc.build_on_push);
    const spec = req.source_config?.resource_spec;
    if (spec) {
      checkResourceSpec(spec);
      sc.resource_spec = withDefaults(spec);
    }
    if (req.source === "github" && !src.repo_ref) throw new RuleError("source_revision_config.repo_ref is required for github deployments");
    if (req.source === "external_docker" && !src.image_uri)
      throw new RuleError("source_revision_config.image_uri is required for external_docker deployments");
    const at = new Date(this.now()).toISOString();
    const id = uuidv7(this.now());
    if (req.source === "github") sc.custom_url = `https://${req.name}.deployments.tracepipe.local`;
    const stored = {
      id,
      tenant_id: this.tenantId,
      name: req.name,
      source: req.source,
      source_config: sc,
      source_revision_config: src,
      secrets: req.secrets ?? [],
      created_at: at,
      updated_at: at,
      status: "READY" as const,
      image_version: null,
    };
    const created = await this.store.createDeployment(
      { id, name: req.name, body: stored as unknown as Obj, created_at: at, updated_at: at },
      this.revisionOf(stored, at),
    );
    if (!created) throw new RuleError(`a deployment named ${JSON.stringify(req.name)} already exists`);
    const d = await this.view(stored);
    await this.opts.onCreate?.(d);
    return { value: d, warnings: doNotUseWarnings(spec) };
  }

  async get(id: string): Promise<Deployment> {
    return this.view(await this.load(id));
  }

  async getRevision(id: string, revisionId: string): Promise<Revision> {
    await this.load(id);
    const rev = (await this.revisions(id)).find((r) => r.id === revisionId);
    if (!rev) throw new NotFoundError(`revision ${revisionId} of deployment ${id} not found`);
    return { ...rev, status: this.status(rev) };
  }

  /**
   * SPEC §4.1: every member optional and nullable; null leaves a field as it
   * is. The change is applied to the deployment as stored when it is written:
   * when another PATCH (here or in a collector sharing the store) wrote in
   * between, it is applied again over that one's result, so neither is lost.
   */
  async patch(id: string, body: unknown): Promise<Outcome<Deployment>> {
    let current = await this.load(id);
    // name and source first: they are not PATCH members at all, and saying why beats "unrecognized key".
    checkCreationOnly(body);
    const req = parseBody(DeploymentPatchRequest, body);
    for (;;) {
      const done = await this.patchOnce(id, req, current);
      if (done) return done;
      current = await this.load(id);
    }
  }

  /** One attempt: undefined when the stored deployment is no longer `current`. */
  private async patchOnce(id: string, req: DeploymentPatchRequest, current: StoredDeployment): Promise<Outcome<Deployment> | undefined> {
    checkImmutable(req, current);
    checkSourceFields(current.source, req.source_config, req.source_revision_config);
    const sc = { ...current.source_config, ...nonNull(req.source_config as Record<string, unknown>) };
    const src = { ...current.source_revision_config, ...nonNull(req.source_revision_config as Record<string, unknown>) };
    const listener = req.source_config?.listener_config;
    if (listener) sc.listener_config = { ...((current.source_config.listener_config as object) ?? {}), ...nonNull(listener) };
    checkTagBuildOnPush(src.repo_ref, sc.build_on_push);
    const spec = req.source_config?.resource_spec;
    if (spec) {
      checkResourceSpec(spec);
      sc.resource_spec = withDefaults(spec as ResourceSpec); // a new resource_spec replaces the old one whole
    }
    // Later than the update it follows, so each update's updated_at is its own (the store compares them).
    const at = new Date(Math.max(this.now(), Date.parse(current.updated_at) + 1)).toISOString();
    const next = { ...current, source_config: sc, source_revision_config: src, secrets: req.secrets ?? current.secrets, updated_at: at };
    const updated = await this.store.updateDeployment(
      id,
      next as unknown as Obj,
      at,
      triggersRevision(req) ? this.revisionOf(next, at) : undefined,
      current.updated_at,
    );
    if (!updated) return undefined;
    return { value: await this.view(next), warnings: doNotUseWarnings(spec) };
  }
}
