/**
 * PATCHes to one deployment that arrive together, each changing a different
 * member: every change is kept, on SQLite and on PostgreSQL (where two
 * collectors may share the store).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { ControlPlane } from "../../src/control/service.js";
import { openStore, type Store } from "../../src/store/index.js";
import { sharedPostgres, skipWithoutPostgres } from "../helpers/postgres.js";
import { tempDir } from "../helpers/runs.js";

const pg = !skipWithoutPostgres();

const targets: [string, () => Promise<string>][] = [["SQLite", async () => join(tempDir("tp-cp-"), "traces.db")]];
if (pg) targets.push(["PostgreSQL", async () => (await sharedPostgres()).migratedDatabase()]);

describe.each(targets)("control plane over %s", (_name, target) => {
  let stores: Store[] = [];
  beforeAll(async () => {
    const t = await target();
    // Two stores on one database: two collectors sharing it.
    stores = [await openStore(t), await openStore(t)];
  }, 60_000);
  afterAll(async () => {
    for (const s of stores) await s.close();
  });

  it("keeps what each of several PATCHes to one deployment changed when they arrive together", async () => {
    const planes = stores.map((s) => new ControlPlane(s, { buildMs: 0 }));
    for (let round = 0; round < 5; round++) {
      const { value: d } = await planes[0]!.create({
        name: `together-${round}`,
        source: "external_docker",
        source_revision_config: { image_uri: "registry.example.com/agent:1" },
      });
      await Promise.all([
        planes[0]!.patch(d.id, { secrets: [{ name: "TOKEN", value: "v" }] }),
        planes[1]!.patch(d.id, { source_config: { custom_url: "https://agent.example.com" } }),
        planes[0]!.patch(d.id, { source_revision_config: { image_uri: "registry.example.com/agent:2" } }),
        planes[1]!.patch(d.id, { source_config: { build_command: null, resource_spec: { cpu: 2 } } }),
      ]);
      const after = await planes[0]!.get(d.id);
      expect(after.secrets, `round ${round}`).toEqual([{ name: "TOKEN", value: "v" }]);
      expect(after.source_config.custom_url, `round ${round}`).toBe("https://agent.example.com");
      expect(after.source_revision_config.image_uri, `round ${round}`).toBe("registry.example.com/agent:2");
      expect(after.source_config.resource_spec, `round ${round}`).toMatchObject({ cpu: 2 });
    }
  });
});
