/** Deployments and revisions as the control plane keeps them: documents found by id, names unique, revisions in order. */
import { describe, expect, it } from "vitest";
import type { DeploymentRecord, RevisionRecord } from "../../../src/store/index.js";
import { eachStore, newId, type OpenStore } from "./fixtures.js";

function deployment(name: string, at = "2026-11-22T10:00:00.000Z"): DeploymentRecord {
  const id = newId();
  return {
    id,
    name,
    body: { id, name, source: "github", source_config: { build_on_push: true, nested: { list: [1, "two", null] } } },
    created_at: at,
    updated_at: at,
  };
}

function revision(d: DeploymentRecord, at: string, id = newId()): RevisionRecord {
  return { id, deployment_id: d.id, body: { id, deployment_id: d.id, source_revision_config: { repo_ref: "main" } }, created_at: at };
}

export function deploymentsContract(open: OpenStore): void {
  describe("deployments and revisions", () => {
    const store = eachStore(open);

    it("stores a deployment with its first revision, and reads both back as given", async () => {
      const d = deployment("agent");
      const r = revision(d, d.created_at);
      expect(await store().createDeployment(d, r)).toBe(true);
      expect(await store().getDeployment(d.id)).toEqual(d);
      expect(await store().listRevisions(d.id)).toEqual([r]);
      expect(await store().getDeployment(newId())).toBeUndefined();
    });

    it("refuses a second deployment of a name, storing nothing of it", async () => {
      const first = deployment("taken");
      await store().createDeployment(first, revision(first, first.created_at));
      const second = deployment("taken");
      expect(await store().createDeployment(second, revision(second, second.created_at))).toBe(false);
      expect([await store().getDeployment(second.id), await store().listRevisions(second.id)]).toEqual([undefined, []]);
    });

    it("updates a deployment's document, adding a revision when given, revisions oldest first", async () => {
      const d = deployment("agent");
      const r1 = revision(d, "2026-11-22T10:00:00.000Z");
      await store().createDeployment(d, r1);
      const body = { ...d.body, secrets: [{ name: "KEY" }] };
      expect(await store().updateDeployment(d.id, body, "2026-11-22T10:05:00.000Z")).toBe(true);
      expect(await store().getDeployment(d.id)).toEqual({ ...d, body, updated_at: "2026-11-22T10:05:00.000Z" });
      expect(await store().listRevisions(d.id)).toEqual([r1]);
      // Two revisions at one instant are ordered by id.
      const r3 = revision(d, "2026-11-22T10:10:00.000Z", "0192b3c4-d5e6-7f00-8000-00000000fff2");
      const r2 = revision(d, "2026-11-22T10:10:00.000Z", "0192b3c4-d5e6-7f00-8000-00000000fff1");
      await store().updateDeployment(d.id, body, "2026-11-22T10:10:00.000Z", r3);
      await store().updateDeployment(d.id, body, "2026-11-22T10:10:00.000Z", r2);
      expect((await store().listRevisions(d.id)).map((r) => r.id)).toEqual([r1.id, r2.id, r3.id]);
    });

    it("updates only while updated_at is still the one given, when one is given", async () => {
      const d = deployment("guarded");
      const r1 = revision(d, d.created_at);
      await store().createDeployment(d, r1);
      const mine = { ...d.body, secrets: [{ name: "MINE" }] };
      const theirs = { ...d.body, secrets: [{ name: "THEIRS" }] };
      expect(await store().updateDeployment(d.id, theirs, "2026-11-22T10:05:00.000Z", undefined, d.updated_at)).toBe(true);
      // Read before theirs was written: refused, nothing stored, no revision added.
      const late = revision(d, "2026-11-22T10:05:00.001Z");
      expect(await store().updateDeployment(d.id, mine, "2026-11-22T10:05:00.001Z", late, d.updated_at)).toBe(false);
      expect(await store().getDeployment(d.id)).toEqual({ ...d, body: theirs, updated_at: "2026-11-22T10:05:00.000Z" });
      expect(await store().listRevisions(d.id)).toEqual([r1]);
      expect(await store().updateDeployment(d.id, mine, "2026-11-22T10:05:00.001Z", late, "2026-11-22T10:05:00.000Z")).toBe(true);
      expect((await store().getDeployment(d.id))?.body).toEqual(mine);
    });

    it("updates nothing for an unknown deployment", async () => {
      const ghost = deployment("ghost");
      expect(await store().updateDeployment(ghost.id, ghost.body, ghost.updated_at, revision(ghost, ghost.created_at))).toBe(false);
      expect([await store().getDeployment(ghost.id), await store().listRevisions(ghost.id)]).toEqual([undefined, []]);
    });
  });
}
