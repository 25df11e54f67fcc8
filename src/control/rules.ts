/**
 * The control plane's rules beyond shape (SPEC §2.2–2.4, §3): pure functions
 * over a parsed request and the stored deployment. A broken rule is a
 * RuleError, answered as 400 with a `detail` string naming the field.
 */
import type { z } from "zod";
import { TracepipeError, ValidationError, zodIssues, type Issue } from "../errors.js";
import { DO_NOT_USE, type ResourceSpec, type Source, type SourceConfigRequest, type SourceRevisionConfigRequest } from "./schema.js";

export class RuleError extends TracepipeError {
  override name = "RuleError";
  readonly status = 400;
}

/** zod -> SPEC §7's ValidationError list (422). */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issues: Issue[] = zodIssues(r.error.issues, ["body"]);
  throw new ValidationError(issues);
}

const GITHUB_ONLY_CONFIG = ["integration_id", "repo_url", "deployment_type", "build_on_push", "install_command", "build_command"] as const;
const DOCKER_ONLY_CONFIG = ["resource_spec", "listener_id", "listener_config", "custom_url"] as const;
const GITHUB_ONLY_REVISION = ["repo_ref", "graph_config_path"] as const;
const DOCKER_ONLY_REVISION = ["image_uri"] as const;

/**
 * A non-null field must belong to the deployment's source. `install_command`
 * and `build_command` (JS deployments) are built from a repository, so github.
 * `internal_docker`'s fields are not specified; it is held to no source rule.
 */
export function checkSourceFields(
  source: Source,
  sc: SourceConfigRequest | null | undefined,
  src: SourceRevisionConfigRequest | null | undefined,
): void {
  if (source === "internal_docker") return;
  const other = source === "github" ? "external_docker" : "github";
  const bad = (where: string, field: string) => {
    if (field === "custom_url" && source === "github")
      throw new RuleError("source_config.custom_url is set automatically for github deployments; it can be set only for external_docker");
    throw new RuleError(`${where}.${field} applies to ${other} deployments, not ${source}`);
  };
  const configNot = source === "github" ? DOCKER_ONLY_CONFIG : GITHUB_ONLY_CONFIG;
  const revisionNot = source === "github" ? DOCKER_ONLY_REVISION : GITHUB_ONLY_REVISION;
  for (const f of configNot) if (sc?.[f] !== undefined && sc[f] !== null) bad("source_config", f);
  for (const f of revisionNot) if (src?.[f] !== undefined && src[f] !== null) bad("source_revision_config", f);
}

/** `name` and `source` are fixed at creation (SPEC §2.1). */
export function checkCreationOnly(raw: unknown): void {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return;
  for (const f of ["name", "source"]) if (f in raw) throw new RuleError(`${f} cannot be changed after creation`);
}

/** Fields PATCH cannot change (SPEC §2.1–2.2): the same value again is accepted, a different one is not. */
export function checkImmutable(
  body: { source_config?: SourceConfigRequest | null },
  current: { source_config: Record<string, unknown> },
): void {
  const sc = body.source_config as Record<string, unknown> | null | undefined;
  if (!sc || typeof sc !== "object") return;
  for (const f of ["integration_id", "repo_url", "deployment_type", "listener_id"]) {
    if (sc[f] !== undefined && sc[f] !== null && sc[f] !== current.source_config[f])
      throw new RuleError(`source_config.${f} cannot be changed by PATCH`);
  }
  const lc = sc.listener_config as Record<string, unknown> | null | undefined;
  const currentNs = (current.source_config.listener_config as Record<string, unknown> | null | undefined)?.k8s_namespace ?? null;
  if (lc && typeof lc === "object" && lc.k8s_namespace !== undefined && lc.k8s_namespace !== null && lc.k8s_namespace !== currentNs) {
    throw new RuleError("source_config.listener_config.k8s_namespace cannot be changed by PATCH");
  }
}

/** A tag (`refs/tags/...`) is fixed: building on push to it makes no sense (SPEC §2.2–2.3). */
export function checkTagBuildOnPush(repoRef: unknown, buildOnPush: unknown): void {
  if (typeof repoRef === "string" && repoRef.startsWith("refs/tags/") && buildOnPush === true) {
    throw new RuleError(`source_config.build_on_push must not be true when source_revision_config.repo_ref is a tag (${repoRef})`);
  }
}

/** Mounts name volumes; env vars take a value or a valueFrom, not both. */
export function checkResourceSpec(spec: ResourceSpec): void {
  const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
  const seen = new Set<string>();
  for (const [i, v] of (spec.volumes ?? []).entries()) {
    if (seen.has(v.name))
      throw new RuleError(`source_config.resource_spec.volumes[${i}].name ${JSON.stringify(v.name)} is not unique in the pod`);
    seen.add(v.name);
  }
  const mounts = (where: string, list: { name: string }[] | null | undefined) => {
    for (const [i, m] of (list ?? []).entries()) {
      if (!volumes.has(m.name))
        throw new RuleError(`${where}[${i}].name ${JSON.stringify(m.name)} matches no volume in source_config.resource_spec.volumes`);
    }
  };
  mounts("source_config.resource_spec.volume_mounts", spec.volume_mounts);
  for (const kind of ["init_containers", "sidecars"] as const) {
    for (const [i, c] of (spec[kind] ?? []).entries()) {
      const at = `source_config.resource_spec.${kind}[${i}]`;
      mounts(`${at}.volumeMounts`, c.volumeMounts);
      for (const [j, e] of (c.env ?? []).entries()) {
        if (e.valueFrom && e.value) throw new RuleError(`${at}.env[${j}] (${e.name}): valueFrom cannot be used with a non-empty value`);
      }
    }
  }
}

export function doNotUseWarnings(spec: ResourceSpec | null | undefined): string[] {
  if (!spec) return [];
  return DO_NOT_USE.filter((f) => spec[f] !== undefined && spec[f] !== null).map(
    (f) => `source_config.resource_spec.${f} is accepted but should not be used`,
  );
}

/**
 * SPEC §2.4's defaults: a limit not set is twice its request; the queue takes
 * the main container's scale, CPU and memory unless given.
 */
export function withDefaults(spec: ResourceSpec): ResourceSpec {
  const s: Record<string, unknown> = { ...spec };
  const set = (k: string, v: unknown) => {
    if ((s[k] === undefined || s[k] === null) && v !== undefined && v !== null) s[k] = v;
  };
  const twice = (v: unknown) => (typeof v === "number" ? Math.round(v * 2 * 10) / 10 : undefined);
  set("queue_min_scale", s.min_scale);
  set("queue_max_scale", s.max_scale);
  set("queue_cpu", s.cpu);
  set("queue_memory_mb", s.memory_mb);
  for (const [limit, request] of [
    ["cpu_limit", "cpu"],
    ["memory_limit_mb", "memory_mb"],
    ["queue_cpu_limit", "queue_cpu"],
    ["queue_memory_limit_mb", "queue_memory_mb"],
    ["redis_cpu_limit", "redis_cpu"],
    ["db_cpu_limit", "db_cpu"],
    ["db_memory_limit_mb", "db_memory_mb"],
  ] as const) {
    set(limit, limit.endsWith("_mb") && typeof s[request] === "number" ? (s[request] as number) * 2 : twice(s[request]));
  }
  for (const k of Object.keys(s)) if (s[k] === undefined) delete s[k];
  return s as ResourceSpec;
}

/** SPEC §3: which PATCH members create a revision. */
export function triggersRevision(p: {
  source_config?: SourceConfigRequest | null;
  source_revision_config?: SourceRevisionConfigRequest | null;
  secrets?: unknown[] | null;
}): boolean {
  const src = p.source_revision_config;
  return (
    (src !== undefined &&
      src !== null &&
      ((src.repo_ref ?? null) !== null || (src.graph_config_path ?? null) !== null || (src.image_uri ?? null) !== null)) ||
    (p.secrets !== undefined && p.secrets !== null) ||
    (p.source_config?.resource_spec !== undefined && p.source_config.resource_spec !== null)
  );
}
