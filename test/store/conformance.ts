/**
 * The store conformance suite: every behaviour the collector and the embedded
 * sink rely on, written once against the Store contract and run on every
 * implementation (sqlite.test.ts; the PostgreSQL store runs it too). It never
 * reaches past the contract, so a store passes it by behaviour alone.
 *
 *   describeStoreContract("SQLite", async () => ({ store: await openStore(path), cleanup: ... }));
 */
import { describe, expect, it } from "vitest";
import { attachmentsContract } from "./contract/attachments.js";
import { deploymentsContract } from "./contract/deployments.js";
import { eachStore, rootRun, type OpenStore } from "./contract/fixtures.js";
import { projectsContract } from "./contract/projects.js";
import { runsContract } from "./contract/runs.js";
import { logsContract } from "./contract/logs.js";
import { spansContract } from "./contract/spans.js";
import { tracesContract } from "./contract/traces.js";
import { insightsContract } from "./contract/insights.js";
import { identityContract } from "./contract/identity.js";
import { retentionContract } from "./contract/retention.js";
import { webhookOutboxContract } from "./contract/webhooks.js";
import { rollupsContract } from "./contract/rollups.js";

export type { OpenStore };

/** `open` makes a fresh, empty store each time; `cleanup` closes it and removes what it made. */
export function describeStoreContract(name: string, open: OpenStore): void {
  describe(`the store contract: ${name}`, () => {
    runsContract(open);
    tracesContract(open);
    spansContract(open);
    logsContract(open);
    projectsContract(open);
    attachmentsContract(open);
    deploymentsContract(open);
    insightsContract(open);
    identityContract(open);
    retentionContract(open);
    webhookOutboxContract(open);
    rollupsContract(open);

    describe("lifecycle", () => {
      const store = eachStore(open);
      it("closes once and again without error", async () => {
        await store().ingest({ post: [rootRun()] });
        await store().close();
        await expect(store().close()).resolves.toBeUndefined();
      });
    });
  });
}
