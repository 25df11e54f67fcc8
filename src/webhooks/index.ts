/** `tracepipe/webhooks`: run-completion webhooks: the graph.json config, the URL policy and the sender. */
export { loadWebhookConfig, checkWebhookConfig, type WebhookConfig } from "./config.js";
export { vetWebhookUrl, isPublicAddress, WebhookUrlError, type PolicyOptions, type VettedUrl } from "./policy.js";
export { WebhookSender, RUN_ID_HEADER, ATTEMPT_HEADER, type WebhookSenderOptions, type AttemptResult } from "./sender.js";
