/**
 * EmbeddedSink: no endpoint configured, so runs go straight into the SQLite
 * store the collector uses (TRACEPIPE_DB). This is what makes `npx tracepipe`
 * useful with no server running.
 */
import { createHash } from "node:crypto";
// Type-only: the store (better-sqlite3) loads on first send, so `import "tracepipe"` stays light
// and a bundled app that always sets an endpoint never evaluates the native driver.
import type { SqliteRunStore } from "../server/store/index.js";
import type { Run, RunPatch } from "../run/schema.js";
import type { Op } from "./ops.js";
import { SinkError, type Sink, type SinkLimits } from "./sink.js";

export class EmbeddedSink implements Sink {
  readonly target: string;
  private store?: Promise<SqliteRunStore>;

  constructor(private readonly path: string) {
    this.target = path;
  }

  private open(): Promise<SqliteRunStore> {
    return (this.store ??= import("../server/store/index.js").then(({ openStore }) => openStore(this.path)));
  }

  async limits(): Promise<SinkLimits> {
    return { batchSize: 1000, batchBytes: 64 * 1024 * 1024 };
  }

  async send(ops: Op[]): Promise<void> {
    // A store that could not open (unwritable directory, a bundle without the native driver) is
    // retried like any failed send, so the next attempt opens afresh.
    const store = await this.open().catch((err: unknown) => {
      this.store = undefined;
      throw err;
    });
    const post = ops.filter((o) => o.kind === "post").map((o) => o.run as unknown as Run);
    const patch = ops.filter((o) => o.kind === "patch").map((o) => o.run as unknown as RunPatch);
    try {
      store.db.transaction(() => {
        store.ingest({ post, patch });
        for (const o of ops) {
          for (const [name, [mime, data]] of Object.entries(o.attachments ?? {})) {
            const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
            store.putAttachment(o.id, name, mime, buf, createHash("sha256").update(buf).digest("hex"));
          }
        }
      })();
    } catch (err) {
      // A locked or busy database is worth retrying; anything else will not get better.
      const code = (err as { code?: string }).code ?? "";
      throw new SinkError(`writing ${this.path} failed: ${(err as Error).message}`, code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED") ? "retry" : "fatal");
    }
  }

  async close(): Promise<void> {
    const store = this.store;
    this.store = undefined;
    (await store?.catch(() => undefined))?.close();
  }
}
