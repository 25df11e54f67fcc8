/**
 * The deployment control plane's records (SPEC §3–4): deployments and their
 * revisions. The control plane (src/control) owns their shape and rules; the
 * store keeps each as a JSON document with the columns it is found by.
 */
import type { Obj } from "../../internal/obj.js";

export interface DeploymentRecord {
  id: string;
  /** Unique among deployments. */
  name: string;
  /** The deployment as the control plane stores it. */
  body: Obj;
  created_at: string;
  updated_at: string;
}

export interface RevisionRecord {
  id: string;
  deployment_id: string;
  /** The revision as the control plane stores it. */
  body: Obj;
  created_at: string;
}

export interface DeploymentStore {
  /**
   * Store a new deployment with its first revision, both or neither. Resolves
   * to false, storing nothing, when a deployment of that name exists.
   */
  createDeployment(deployment: DeploymentRecord, revision: RevisionRecord): Promise<boolean>;
  getDeployment(id: string): Promise<DeploymentRecord | undefined>;
  /**
   * Replace a deployment's body and updated_at, and add `revision` when given,
   * both or neither. Resolves to false when there is no such deployment, or
   * when `ifUpdatedAt` is given and the stored updated_at is no longer it
   * (another update came first: nothing is stored).
   */
  updateDeployment(id: string, body: Obj, updatedAt: string, revision?: RevisionRecord, ifUpdatedAt?: string): Promise<boolean>;
  /** A deployment's revisions, oldest first (created_at, then id). */
  listRevisions(deploymentId: string): Promise<RevisionRecord[]>;
}
