/**
 * The `webhooks` and `http` sections of `graph.json` (SPEC §6): parsed with
 * zod, headers' `${{ env.NAME }}` references resolved against the environment
 * (only names with the allowed prefix, `SVC_WEBHOOK_` unless
 * `webhooks.env_prefix` says otherwise), and every problem reported at once
 * with its location, so a server refuses to start with a clear list.
 */
import { z } from "zod";
import { ConfigError, zodIssues, type Issue } from "../errors.js";
import { isObj } from "../internal/obj.js";
import { networkIssues } from "./networks.js";

export const DEFAULT_ENV_PREFIX = "SVC_WEBHOOK_";

const UrlPolicy = z.strictObject({
  allowed_domains: z.array(z.string().min(1)).optional(),
  require_https: z.boolean().optional(),
  allowed_ports: z.array(z.number().int().min(1).max(65535)).optional(),
  disable_loopback: z.boolean().optional(),
  max_url_length: z.number().int().positive().optional(),
  /** CIDR ranges a receiver may be in although the policy refuses them by default (networks.ts). */
  allowed_networks: z.array(z.string().min(1)).optional(),
});

const WebhooksSection = z.strictObject({
  headers: z.record(z.string(), z.string()).optional(),
  env_prefix: z.string().min(1).optional(),
  url: UrlPolicy.optional(),
});

const HttpSection = z.looseObject({ disable_webhooks: z.boolean().optional() });

/** The sections we read; the rest of graph.json (graphs, dependencies, ...) is not ours to judge. */
export const GraphConfig = z.looseObject({ webhooks: WebhooksSection.optional(), http: HttpSection.optional() });

export type UrlPolicy = z.infer<typeof UrlPolicy>;

export interface WebhookConfig {
  enabled: boolean;
  /** Static headers, env references resolved. */
  headers: Record<string, string>;
  policy: UrlPolicy;
}

const REF = /\$\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/**
 * The checks beyond the shape: env references, allowed_domains patterns and allowed_networks ranges.
 * They read the raw document leniently (whatever parts have the right type),
 * so one run of check-config lists shape, env-prefix and domain problems
 * together instead of revealing them one layer at a time.
 */
function checkValues(raw: unknown, env: Record<string, string | undefined>, headers: Record<string, string>): Issue[] {
  const issues: Issue[] = [];
  const wh = isObj(raw) && isObj(raw.webhooks) ? raw.webhooks : {};
  const custom = typeof wh.env_prefix === "string" && wh.env_prefix.length > 0 ? wh.env_prefix : undefined;
  // An env_prefix of the wrong type is reported by the shape check; references are still judged, by the default.
  const prefix = custom ?? DEFAULT_ENV_PREFIX;
  for (const [name, value] of Object.entries(isObj(wh.headers) ? wh.headers : {})) {
    if (typeof value !== "string") continue;
    headers[name] = value.replace(REF, (_m, ref: string) => {
      if (!ref.startsWith(prefix)) {
        issues.push({
          loc: ["webhooks", "headers", name],
          msg: `references env.${ref}, but only variables starting with ${prefix} may be used${custom ? " (webhooks.env_prefix)" : ""}`,
          type: "env_prefix",
        });
        return "";
      }
      const v = env[ref];
      if (v === undefined) {
        issues.push({ loc: ["webhooks", "headers", name], msg: `references env.${ref}, which is not set`, type: "env_missing" });
        return "";
      }
      return v;
    });
    if (/\$\{\{/.test(value.replace(REF, "")))
      issues.push({
        loc: ["webhooks", "headers", name],
        msg: "a ${{ ... }} reference that is not of the form ${{ env.NAME }}",
        type: "value_error",
      });
  }
  const domains = isObj(wh.url) && Array.isArray(wh.url.allowed_domains) ? (wh.url.allowed_domains as unknown[]) : [];
  for (const [i, d] of domains.entries()) {
    if (typeof d === "string" && d.length > 0 && !/^(\*\.)?([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i.test(d)) {
      issues.push({
        loc: ["webhooks", "url", "allowed_domains", i],
        msg: `${JSON.stringify(d)} is not a hostname or a *.domain wildcard`,
        type: "value_error",
      });
    }
  }
  issues.push(...networkIssues(isObj(wh.url) && Array.isArray(wh.url.allowed_networks) ? (wh.url.allowed_networks as unknown[]) : []));
  return issues;
}

/** Every problem in a parsed graph.json's webhook configuration (shape, env references, domains, all at once), or the resolved configuration. */
export function checkWebhookConfig(
  raw: unknown,
  env: Record<string, string | undefined> = process.env,
): { config?: WebhookConfig; issues: Issue[] } {
  const r = GraphConfig.safeParse(raw);
  const headers: Record<string, string> = {};
  const issues: Issue[] = r.success ? [] : zodIssues(r.error.issues);
  issues.push(...checkValues(raw, env, headers));
  if (!r.success || issues.length) return { issues };
  return { config: { enabled: r.data.http?.disable_webhooks !== true, headers, policy: r.data.webhooks?.url ?? {} }, issues: [] };
}

/** For server start-up: the configuration, or a ConfigError listing every problem. */
export function loadWebhookConfig(raw: unknown, env: Record<string, string | undefined> = process.env): WebhookConfig {
  const { config, issues } = checkWebhookConfig(raw, env);
  if (!config) throw new ConfigError(issues);
  return config;
}
