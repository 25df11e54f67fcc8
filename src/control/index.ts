/** `tracepipe/control`: the deployments control-plane client and schemas (webhooks: `tracepipe/webhooks`). */
export { Deployments, ControlPlaneError, type DeploymentsOptions, type WaitOptions, type Result } from "./client.js";
export {
  DeploymentCreateRequest,
  DeploymentPatchRequest,
  ResourceSpec,
  type Deployment,
  type DeploymentStatus,
  type Revision,
  type RevisionStatus,
} from "./schema.js";
