import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneError, Deployments } from "../../src/control/client.js";
import { ValidationError } from "../../src/errors.js";
import { startCollector, type Running } from "../helpers/collector.js";

let col: Running;
let api: Deployments;
/** The control plane's clock: builds age only when a test moves it, however long the machine takes between polls. */
let clock = Date.now();
beforeAll(async () => {
  col = await startCollector({ apiKey: "cp-key", deploymentBuildMs: 300, deploymentClock: () => clock });
  api = new Deployments({ endpoint: col.url, apiKey: "cp-key" });
});
afterAll(async () => {
  await col.close();
});

let n = 0;
const docker = (extra: Record<string, unknown> = {}) => ({
  name: `docker-${++n}`,
  source: "external_docker" as const,
  source_revision_config: { image_uri: "registry.example.com/agent:1" },
  ...extra,
});
const github = (extra: Record<string, unknown> = {}) => ({
  name: `gh-${++n}`,
  source: "github" as const,
  source_config: {
    integration_id: "0192b3c4-d5e6-7f00-8000-000000000001",
    repo_url: "https://github.com/acme/agent",
    deployment_type: "dev" as const,
    build_on_push: true,
  },
  source_revision_config: { repo_ref: "main", graph_config_path: "graph.json" },
  ...extra,
});

/** The error a call throws, for exact status and detail assertions. */
async function failure(p: Promise<unknown>): Promise<ControlPlaneError | ValidationError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ControlPlaneError || err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error("expected the call to fail");
}
async function rule(p: Promise<unknown>): Promise<string> {
  const e = await failure(p);
  expect(e).toBeInstanceOf(ControlPlaneError);
  expect((e as ControlPlaneError).status).toBe(400);
  return (e as ControlPlaneError).detail as string;
}
async function shape(p: Promise<unknown>) {
  const e = await failure(p);
  expect(e).toBeInstanceOf(ValidationError);
  return (e as ValidationError).issues;
}

describe("deployments: create, read, revisions", () => {
  it("creates a deployment with its tracing project and first revision, fills resource defaults, and the revision reaches DEPLOYED", async () => {
    const d = await api.create(
      docker({ source_config: { resource_spec: { min_scale: 1, max_scale: 3, cpu: 1.04, memory_mb: 512, redis_cpu: 0.5 } } }),
    );
    expect(d).toMatchObject({ source: "external_docker", status: "READY", active_revision_id: null });
    expect(d.latest_revision_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await col.collector.store.projectExists(d.name)).toBe(true);
    expect(d.source_config.resource_spec).toEqual({
      min_scale: 1,
      max_scale: 3,
      cpu: 1,
      cpu_limit: 2,
      memory_mb: 512,
      memory_limit_mb: 1024,
      queue_min_scale: 1,
      queue_max_scale: 3,
      queue_cpu: 1,
      queue_cpu_limit: 2,
      queue_memory_mb: 512,
      queue_memory_limit_mb: 1024,
      redis_cpu: 0.5,
      redis_cpu_limit: 1,
    });
    const seen: string[] = [];
    const rev = await api.waitForRevision(d.id, d.latest_revision_id!, {
      intervalMs: 20,
      timeoutMs: 5000,
      onPoll: (r) => {
        seen.push(r.status);
        clock += 100;
      },
    });
    expect(rev).toMatchObject({
      id: d.latest_revision_id,
      status: "DEPLOYED",
      source_revision_config: { image_uri: "registry.example.com/agent:1" },
    });
    expect(seen[0]).not.toBe("DEPLOYED");
    expect((await api.get(d.id)).active_revision_id).toBe(d.latest_revision_id);
  });

  it("times out waiting with the last status named", async () => {
    const d = await api.create(docker());
    await expect(api.waitForRevision(d.id, d.latest_revision_id!, { intervalMs: 10, timeoutMs: 30 })).rejects.toThrow(
      /not DEPLOYED within 30 ms \(last status (QUEUED|BUILDING)\)/,
    );
  });

  it("answers 404 naming the id, and 422 for an id that is not a UUID", async () => {
    const e = await failure(api.get("0192b3c4-d5e6-7f00-8000-0000000000ff"));
    expect(e).toMatchObject({ status: 404, detail: "deployment 0192b3c4-d5e6-7f00-8000-0000000000ff not found" });
    const d = await api.create(docker());
    expect(await failure(api.getRevision(d.id, "0192b3c4-d5e6-7f00-8000-0000000000ee"))).toMatchObject({
      status: 404,
      detail: `revision 0192b3c4-d5e6-7f00-8000-0000000000ee of deployment ${d.id} not found`,
    });
    expect(await shape(api.get("not-a-uuid"))).toEqual([{ loc: ["path", "deployment_id"], msg: "must be a UUID", type: "uuid_parsing" }]);
  });

  it("requires the API key", async () => {
    const anon = new Deployments({ endpoint: col.url, apiKey: "" });
    expect(await failure(anon.get("0192b3c4-d5e6-7f00-8000-0000000000ff"))).toMatchObject({ status: 401 });
  });
});

describe("PATCH: which members create a revision (SPEC §3)", () => {
  it("creates one for image_uri, secrets or resource_spec, which replaces the old spec whole; not for other fields or nulls", async () => {
    const d = await api.create(docker({ source_config: { resource_spec: { cpu: 1, labels: { team: "a" } } } }));
    const r0 = d.latest_revision_id;
    const same = await api.patch(d.id, {
      source_config: { custom_url: "https://agent.example.com" },
      source_revision_config: { image_uri: null },
      secrets: null,
    });
    expect(same.latest_revision_id).toBe(r0);
    expect(same.source_config.custom_url).toBe("https://agent.example.com");
    const img = await api.patch(d.id, { source_revision_config: { image_uri: "registry.example.com/agent:2" } });
    expect(img.latest_revision_id).not.toBe(r0);
    const sec = await api.patch(d.id, { secrets: [{ name: "OPENAI_API_KEY", value: "sk-x" }] });
    expect(sec.latest_revision_id).not.toBe(img.latest_revision_id);
    expect(sec.secrets).toEqual([{ name: "OPENAI_API_KEY", value: "sk-x" }]);
    const spec = await api.patch(d.id, { source_config: { resource_spec: { memory_mb: 256 } } });
    expect(spec.latest_revision_id).not.toBe(sec.latest_revision_id);
    expect(spec.source_config.resource_spec).toEqual({
      memory_mb: 256,
      memory_limit_mb: 512,
      queue_memory_mb: 256,
      queue_memory_limit_mb: 512,
    }); // cpu and labels gone
    expect((await api.getRevision(d.id, spec.latest_revision_id!)).secrets).toEqual(["OPENAI_API_KEY"]); // names only
  });

  it("accepts the do-not-use fields and warns about them", async () => {
    const d = await api.create(docker());
    const r = await api.patchWithWarnings(d.id, { source_config: { resource_spec: { cpu: 1, executor_cpu: 2 } } });
    expect(r.value.source_config.resource_spec).toMatchObject({ executor_cpu: 2 });
    expect(r.warnings).toEqual(["source_config.resource_spec.executor_cpu is accepted but should not be used"]);
  });
});

describe("ids in the path", () => {
  it("finds a deployment and its revision by an upper-case UUID, as any UUID reader does", async () => {
    const d = await api.create(docker());
    const upper = d.id.toUpperCase();
    expect((await api.get(upper)).id).toBe(d.id);
    expect((await api.patch(upper, { source_config: { custom_url: "https://agent.example.com" } })).source_config.custom_url).toBe(
      "https://agent.example.com",
    );
    expect((await api.getRevision(upper, d.latest_revision_id!.toUpperCase())).id).toBe(d.latest_revision_id);
  });
});

describe("PATCH rules (400 with a detail string)", () => {
  it("holds fields to their source", async () => {
    const d = await api.create(docker());
    expect(await rule(api.patch(d.id, { source_revision_config: { repo_ref: "main" } }))).toBe(
      "source_revision_config.repo_ref applies to github deployments, not external_docker",
    );
    expect(await rule(api.patch(d.id, { source_config: { build_command: "npm run build" } }))).toBe(
      "source_config.build_command applies to github deployments, not external_docker",
    );
    const g = await api.create(github());
    expect(await rule(api.patch(g.id, { source_config: { custom_url: "https://x.example.com" } }))).toBe(
      "source_config.custom_url is set automatically for github deployments; it can be set only for external_docker",
    );
    expect(await rule(api.patch(g.id, { source_config: { resource_spec: { cpu: 1 } } }))).toBe(
      "source_config.resource_spec applies to external_docker deployments, not github",
    );
    expect(await rule(api.patch(g.id, { source_revision_config: { image_uri: "x" } }))).toBe(
      "source_revision_config.image_uri applies to external_docker deployments, not github",
    );
  });

  it("refuses to change what PATCH cannot change, and accepts the same value again", async () => {
    const g = await api.create(github());
    expect(await rule(api.patch(g.id, { name: "other" } as never))).toBe("name cannot be changed after creation");
    expect(await rule(api.patch(g.id, { source: "external_docker" } as never))).toBe("source cannot be changed after creation");
    expect(await rule(api.patch(g.id, { source_config: { integration_id: "0192b3c4-d5e6-7f00-8000-000000000009" } }))).toBe(
      "source_config.integration_id cannot be changed by PATCH",
    );
    expect(await rule(api.patch(g.id, { source_config: { repo_url: "https://github.com/acme/other" } }))).toBe(
      "source_config.repo_url cannot be changed by PATCH",
    );
    expect(await rule(api.patch(g.id, { source_config: { deployment_type: "prod" } }))).toBe(
      "source_config.deployment_type cannot be changed by PATCH",
    );
    expect((await api.patch(g.id, { source_config: { repo_url: "https://github.com/acme/agent" } })).id).toBe(g.id);
    const d = await api.create(
      docker({ source_config: { listener_id: "0192b3c4-d5e6-7f00-8000-00000000000a", listener_config: { k8s_namespace: "agents" } } }),
    );
    expect(await rule(api.patch(d.id, { source_config: { listener_id: "0192b3c4-d5e6-7f00-8000-00000000000b" } }))).toBe(
      "source_config.listener_id cannot be changed by PATCH",
    );
    expect(await rule(api.patch(d.id, { source_config: { listener_config: { k8s_namespace: "other" } } }))).toBe(
      "source_config.listener_config.k8s_namespace cannot be changed by PATCH",
    );
  });

  it("refuses build_on_push with a tag, whichever of the two the PATCH sets", async () => {
    const g = await api.create(github());
    expect(await rule(api.patch(g.id, { source_revision_config: { repo_ref: "refs/tags/v1.2.0" } }))).toBe(
      "source_config.build_on_push must not be true when source_revision_config.repo_ref is a tag (refs/tags/v1.2.0)",
    );
    const tagged = await api.patch(g.id, {
      source_config: { build_on_push: false },
      source_revision_config: { repo_ref: "refs/tags/v1.2.0" },
    });
    expect(tagged.source_revision_config.repo_ref).toBe("refs/tags/v1.2.0");
    expect(await rule(api.patch(g.id, { source_config: { build_on_push: true } }))).toBe(
      "source_config.build_on_push must not be true when source_revision_config.repo_ref is a tag (refs/tags/v1.2.0)",
    );
    expect(await rule(api.create(github({ source_revision_config: { repo_ref: "refs/tags/v1" } })))).toBe(
      "source_config.build_on_push must not be true when source_revision_config.repo_ref is a tag (refs/tags/v1)",
    );
  });

  it("requires volume mounts to name a volume, unique volume names, and no valueFrom beside a value", async () => {
    const d = await api.create(docker());
    const spec = (s: Record<string, unknown>) => api.patch(d.id, { source_config: { resource_spec: s } });
    expect(await rule(spec({ volumes: [{ name: "data", emptyDir: {} }], volume_mounts: [{ name: "cache", mountPath: "/cache" }] }))).toBe(
      'source_config.resource_spec.volume_mounts[0].name "cache" matches no volume in source_config.resource_spec.volumes',
    );
    expect(await rule(spec({ volumes: [{ name: "data" }, { name: "data" }] }))).toBe(
      'source_config.resource_spec.volumes[1].name "data" is not unique in the pod',
    );
    expect(
      await rule(
        spec({
          volumes: [{ name: "data" }],
          sidecars: [{ name: "proxy", image: "envoy", volumeMounts: [{ name: "certs", mountPath: "/c" }] }],
        }),
      ),
    ).toBe('source_config.resource_spec.sidecars[0].volumeMounts[0].name "certs" matches no volume in source_config.resource_spec.volumes');
    expect(
      await rule(
        spec({
          init_containers: [
            { name: "init", image: "busybox", env: [{ name: "TOKEN", value: "x", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] },
          ],
        }),
      ),
    ).toBe("source_config.resource_spec.init_containers[0].env[0] (TOKEN): valueFrom cannot be used with a non-empty value");
    const ok = await spec({
      volumes: [{ name: "data", emptyDir: {} }],
      volume_mounts: [{ name: "data", mountPath: "/data" }],
      init_containers: [
        { name: "init", image: "busybox", env: [{ name: "TOKEN", value: "", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] },
      ],
    });
    expect(ok.source_config.resource_spec).toMatchObject({ volume_mounts: [{ name: "data", mountPath: "/data" }] });
  });
});

describe("PATCH shapes (422 with SPEC §7's list)", () => {
  it("names the field for bounds, DNS labels, C identifiers, enums, UUIDs and unknown fields", async () => {
    const d = await api.create(docker());
    const rs = (s: Record<string, unknown>) => shape(api.patch(d.id, { source_config: { resource_spec: s } } as never));
    const at = (...loc: (string | number)[]) => ["body", "source_config", "resource_spec", ...loc];
    expect(await rs({ cpu: 8.5 })).toEqual([expect.objectContaining({ loc: at("cpu"), type: "too_big" })]);
    expect(await rs({ queue_cpu_limit: 0.04 })).toEqual([expect.objectContaining({ loc: at("queue_cpu_limit"), type: "too_small" })]); // rounds to 0.0
    expect((await api.patch(d.id, { source_config: { resource_spec: { cpu: 8.04 } } })).source_config.resource_spec).toMatchObject({
      cpu: 8,
      cpu_limit: 16,
    }); // rounds to 8.0
    expect(await rs({ memory_mb: 1.5 })).toEqual([expect.objectContaining({ loc: at("memory_mb"), type: "invalid_type" })]);
    expect(await rs({ volumes: [{ name: "Data_Vol" }] })).toEqual([
      expect.objectContaining({ loc: at("volumes", 0, "name"), type: "invalid_format" }),
    ]);
    expect(await rs({ sidecars: [{ name: "s", image: "i", env: [{ name: "1BAD" }] }] })).toEqual([
      expect.objectContaining({ loc: at("sidecars", 0, "env", 0, "name"), type: "invalid_format" }),
    ]);
    expect(await rs({ sidecars: [{ name: "s", image: "i", restartPolicy: "Never" }] })).toEqual([
      expect.objectContaining({ loc: at("sidecars", 0, "restartPolicy"), type: "invalid_value" }),
    ]);
    expect(await rs({ image_pull_secrets: [{}] })).toEqual([
      expect.objectContaining({ loc: at("image_pull_secrets", 0, "name"), type: "invalid_type" }),
    ]);
    expect(await rs({ gpu: 1 })).toEqual([expect.objectContaining({ loc: at(), type: "unrecognized_keys" })]);
    expect(await shape(api.patch(d.id, { source_config: { listener_id: "nope" } }))).toEqual([
      expect.objectContaining({ loc: ["body", "source_config", "listener_id"], type: "invalid_format" }),
    ]);
    expect(await shape(api.patch(d.id, { secrets: [{ name: "A" }] } as never))).toEqual([
      expect.objectContaining({ loc: ["body", "secrets", 0, "value"], type: "invalid_type" }),
    ]);
    expect(await shape(api.patch(d.id, { source_revision_config: { repo_commit_sha: "abc" } } as never))).toEqual([
      expect.objectContaining({ loc: ["body", "source_revision_config"], type: "unrecognized_keys" }),
    ]);
  });

  it("rejects a malformed body and a body that is not an object", async () => {
    const d = await api.create(docker());
    const res = await fetch(`${col.url}/v2/deployments/${d.id}`, {
      method: "PATCH",
      headers: { "x-api-key": "cp-key", "content-type": "application/json" },
      body: "{nope",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/JSON/);
    expect(await shape(api.patch(d.id, [] as never))).toEqual([expect.objectContaining({ loc: ["body"], type: "invalid_type" })]);
  });
});
