/** `tracepipe check-config graph.json`: every problem in the webhook configuration (shape, env references, domains, all at once), each with its location. */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { checkWebhookConfig } from "../webhooks/config.js";

export function register(program: Command): void {
  program
    .command("check-config")
    .summary("check the webhooks and http sections of a graph.json")
    .description(
      [
        "Check a graph.json's `webhooks` and `http` sections (docs/deployments.md) the way `tracepipe serve --graph-config` reads them: types, ${{ env.NAME }} references (only names with the SVC_WEBHOOK_ prefix, or webhooks.env_prefix, and they must be set in this environment), allowed_domains patterns, ports and lengths. Every problem of every kind is printed in one run, as {loc, msg, type} on stderr.",
        "Exit codes: 0 no problems, 1 problems found, 2 the file cannot be read or is not JSON.",
      ].join("\n\n"),
    )
    .argument("<file>", "graph.json")
    .action((file: string) => {
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(file, "utf8"));
      } catch (err) {
        process.stderr.write(
          JSON.stringify({ error: { loc: ["file"], msg: `${file}: ${(err as Error).message}`, type: "file_error" } }) + "\n",
        );
        process.exitCode = 2;
        return;
      }
      const { config, issues } = checkWebhookConfig(raw);
      for (const i of issues) process.stderr.write(JSON.stringify({ error: i }) + "\n");
      if (config) {
        process.stdout.write(
          `${file}: ok (webhooks ${config.enabled ? "enabled" : "disabled by http.disable_webhooks"}, ${Object.keys(config.headers).length} header(s))\n`,
        );
        return;
      }
      process.stdout.write(`${file}: ${issues.length} problem(s)\n`);
      process.exitCode = 1;
    });
}
