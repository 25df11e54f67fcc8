/** `tracepipe/control`: the deployments control-plane client and schemas, and run-completion webhooks. */
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
export { loadWebhookConfig, checkWebhookConfig, type WebhookConfig } from "../webhooks/config.js";
export { vetWebhookUrl, isPublicAddress, WebhookUrlError, type PolicyOptions, type VettedUrl } from "../webhooks/policy.js";
export { WebhookSender, type WebhookSenderOptions, type WebhookResult, type WebhookStats } from "../webhooks/sender.js";
