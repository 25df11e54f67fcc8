import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { completionHook } from "../../src/webhooks/completion.js";
import { WebhookSender } from "../../src/webhooks/sender.js";
import type { Run } from "../../src/run/schema.js";
import { runRecord } from "../helpers/collector.js";

describe("the run-completion hook", () => {
  it("is absent when there is neither a caller's hook nor a sender", () => {
    expect(completionHook({})).toBeUndefined();
  });

  it("calls the caller's hook for every completion and POSTs a run's webhook once, however often it completes", async () => {
    const bodies: unknown[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const sender = new WebhookSender({ enabled: true, headers: {}, policy: { allowed_ports: [port] } }, { allowPrivateNetworks: true });
      const seen: string[] = [];
      const hook = completionHook<Run>({ onRunCompleted: (run) => seen.push(run.id), sender })!;
      const asked = runRecord({ end_time: "2026-11-22T10:15:01Z", extra: { metadata: { webhook: `http://127.0.0.1:${port}/done` } } }) as unknown as Run;
      const silent = runRecord({ end_time: "2026-11-22T10:15:01Z" }) as unknown as Run;
      hook(asked);
      hook(asked);
      hook(silent);
      await sender.idle();
      expect(seen).toEqual([asked.id, asked.id, silent.id]);
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toMatchObject({ run_id: asked.id });
    } finally {
      server.close();
    }
  });
});
