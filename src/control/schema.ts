/**
 * The deployment control plane's request bodies (SPEC §2.1–2.4, §4.1), as zod
 * schemas: shapes, types and bounds. A body that fails these is SPEC §7's 422
 * `{detail: [{loc, msg, type}]}`. Rules that relate fields to each other or to
 * the stored deployment (which source a field belongs to, what PATCH cannot
 * change, tags and build-on-push, mounts naming volumes) are in rules.ts and
 * answer 400 with a `detail` string.
 */
import { z } from "zod";

/** RFC 1123 label, as Kubernetes names volumes and containers. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dnsLabel = z
  .string()
  .max(63, "must be at most 63 characters (a DNS label)")
  .regex(DNS_LABEL, "must be a DNS label: lower-case letters, digits and '-', starting and ending with a letter or digit");
const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

const nullable = <T extends z.ZodType>(t: T) => t.nullable().optional();
const count = z.number().int("must be an integer").nonnegative("must not be negative");
const freeForm = z.record(z.string(), z.unknown());
const stringMap = z.record(z.string(), z.string());

/** CPU: rounded to one decimal place (SPEC §2.4), then held to its bounds. */
const cpu = (max: number) =>
  z
    .number()
    .transform((v) => Math.round(v * 10) / 10)
    .pipe(z.number().min(0.1, `must be at least 0.1 (after rounding to one decimal)`).max(max, `must be at most ${max}`));

export const Secret = z.strictObject({ name: z.string().min(1, "must not be empty"), value: z.string() });

export const EnvVar = z.strictObject({
  name: z.string().regex(C_IDENTIFIER, "must be a C identifier (letters, digits and '_', not starting with a digit)"),
  value: nullable(z.string()),
  valueFrom: nullable(freeForm),
});

export const VolumeMount = z.strictObject({
  name: z.string().min(1),
  mountPath: z.string().min(1),
  subPath: z.string().optional(),
  mountPropagation: z.string().optional(),
  readOnly: z.boolean().optional(),
  subPathExpr: z.string().optional(),
});

export const Volume = z.strictObject({
  name: dnsLabel,
  configMap: freeForm.optional(),
  secret: freeForm.optional(),
  emptyDir: freeForm.optional(),
  persistentVolumeClaim: freeForm.optional(),
  nfs: freeForm.optional(),
  projected: freeForm.optional(),
  downwardAPI: freeForm.optional(),
  csi: freeForm.optional(),
});

export const ResourceRequirements = z.strictObject({ limits: nullable(stringMap), requests: nullable(stringMap) });

export const Container = z.strictObject({
  name: dnsLabel,
  image: z.string().min(1),
  imagePullPolicy: z.enum(["Always", "Never", "IfNotPresent"]).optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  workingDir: z.string().optional(),
  env: z.array(EnvVar).optional(),
  envFrom: z.array(freeForm).optional(),
  resources: ResourceRequirements.optional(),
  volumeMounts: z.array(VolumeMount).optional(),
  securityContext: freeForm.optional(),
  restartPolicy: z.enum(["Always", "OnFailure"]).optional(),
});

/** Accepted for compatibility, not to be used (SPEC §2.4): the collector warns when they are set. */
export const DO_NOT_USE = [
  "orchestrator_cpu",
  "orchestrator_cpu_limit",
  "orchestrator_memory_mb",
  "orchestrator_memory_limit_mb",
  "orchestrator_min_scale",
  "orchestrator_max_scale",
  "executor_cpu",
  "executor_cpu_limit",
  "executor_memory_mb",
  "executor_memory_limit_mb",
] as const;

export const ResourceSpec = z.strictObject({
  min_scale: nullable(count),
  max_scale: nullable(count),
  cpu: nullable(cpu(8)),
  cpu_limit: nullable(cpu(16)),
  memory_mb: nullable(count),
  memory_limit_mb: nullable(count),
  queue_min_scale: nullable(count),
  queue_max_scale: nullable(count),
  queue_cpu: nullable(cpu(8)),
  queue_cpu_limit: nullable(cpu(16)),
  queue_memory_mb: nullable(count),
  queue_memory_limit_mb: nullable(count),
  redis_cpu: nullable(cpu(8)),
  redis_cpu_limit: nullable(cpu(16)),
  redis_memory_mb: nullable(count),
  db_cpu: nullable(z.number().positive()),
  db_cpu_limit: nullable(z.number().positive()),
  db_memory_mb: nullable(count),
  db_memory_limit_mb: nullable(count),
  db_storage_gi: nullable(count),
  db_max_connections: nullable(count),
  labels: nullable(stringMap),
  annotations: nullable(stringMap),
  service_account_name: nullable(z.string().min(1)),
  image_pull_secrets: nullable(z.array(z.strictObject({ name: z.string().min(1) }))),
  volumes: nullable(z.array(Volume)),
  volume_mounts: nullable(z.array(VolumeMount)),
  init_containers: nullable(z.array(Container)),
  sidecars: nullable(z.array(Container)),
  orchestrator_cpu: nullable(z.number()),
  orchestrator_cpu_limit: nullable(z.number()),
  orchestrator_memory_mb: nullable(z.number().int()),
  orchestrator_memory_limit_mb: nullable(z.number().int()),
  orchestrator_min_scale: nullable(z.number().int()),
  orchestrator_max_scale: nullable(z.number().int()),
  executor_cpu: nullable(z.number()),
  executor_cpu_limit: nullable(z.number()),
  executor_memory_mb: nullable(z.number().int()),
  executor_memory_limit_mb: nullable(z.number().int()),
});

export const ListenerConfig = z.strictObject({ k8s_namespace: nullable(z.string()) });

export const SourceConfigRequest = z.strictObject({
  integration_id: nullable(z.uuid()),
  repo_url: nullable(z.string()),
  deployment_type: nullable(z.enum(["dev_free", "dev", "prod"])),
  build_on_push: nullable(z.boolean()),
  custom_url: nullable(z.string()),
  resource_spec: nullable(ResourceSpec),
  listener_id: nullable(z.uuid()),
  listener_config: nullable(ListenerConfig),
  install_command: nullable(z.string()),
  build_command: nullable(z.string()),
});

export const SourceRevisionConfigRequest = z.strictObject({
  repo_ref: nullable(z.string().min(1)),
  graph_config_path: nullable(z.string().min(1)),
  image_uri: nullable(z.string().min(1)),
});

export const DeploymentPatchRequest = z.strictObject({
  source_config: nullable(SourceConfigRequest),
  source_revision_config: nullable(SourceRevisionConfigRequest),
  secrets: nullable(z.array(Secret)),
});

export const Source = z.enum(["github", "external_docker", "internal_docker"]);

/** POST /v2/deployments: SPEC names the operation only; this is the PATCH body plus the creation-only fields. */
export const DeploymentCreateRequest = z.strictObject({
  name: dnsLabel,
  source: Source,
  source_config: nullable(SourceConfigRequest),
  source_revision_config: nullable(SourceRevisionConfigRequest),
  secrets: nullable(z.array(Secret)),
});

export type ResourceSpec = z.infer<typeof ResourceSpec>;
export type SourceConfigRequest = z.infer<typeof SourceConfigRequest>;
export type SourceRevisionConfigRequest = z.infer<typeof SourceRevisionConfigRequest>;
export type DeploymentPatchRequest = z.infer<typeof DeploymentPatchRequest>;
export type DeploymentCreateRequest = z.infer<typeof DeploymentCreateRequest>;
export type Source = z.infer<typeof Source>;

export type DeploymentStatus = "AWAITING_DATABASE" | "READY" | "UNUSED" | "AWAITING_DELETE" | "UNKNOWN";

/** SPEC §2.1. */
export interface Deployment {
  id: string;
  tenant_id: string;
  name: string;
  source: Source;
  source_config: Record<string, unknown>;
  source_revision_config: Record<string, unknown>;
  secrets: { name: string; value: string }[];
  created_at: string;
  updated_at: string;
  status: DeploymentStatus;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  image_version?: string | null;
}

/** Revision status: SPEC names DEPLOYED; the collector's simulated build passes through QUEUED and BUILDING first. */
export type RevisionStatus = "QUEUED" | "BUILDING" | "DEPLOYED";

export interface Revision {
  id: string;
  deployment_id: string;
  status: RevisionStatus;
  created_at: string;
  source_revision_config: Record<string, unknown>;
  resource_spec: Record<string, unknown> | null;
  secrets: string[];
}
