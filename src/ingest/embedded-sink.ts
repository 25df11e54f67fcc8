/**
 * EmbeddedSink: no endpoint configured, so runs go straight into the store
 * the collector uses (TRACEPIPE_DB), through the store's one ingest
 * operation: the same checks, the same merge, the same refusals as the
 * collector's 422. The store (and so its database driver) is loaded on first
 * use, so a wrapper user who never writes locally never loads it.
 */
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { StoreUnavailableError, ValidationError } from "../errors.js";
import { isStoreUrl, redactStoreTarget } from "../env.js";
// Type-only: the store (its database driver) loads on first send, so `import "tracepipe"` stays light
// and a bundled app that always sets an endpoint never evaluates the native driver.
import type { Store } from "../store/contract/store.js";
import type { AttachmentInput } from "../store/contract/attachments.js";
import type { Op } from "./ops.js";
import { SinkError, type Sink, type SinkLimits } from "./sink.js";

/** Stores already announced in this process: say where runs go once, not per batch. */
const announced = new Set<string>();

export class EmbeddedSink implements Sink {
  readonly target: string;
  private store?: Promise<Store>;

  constructor(private readonly path: string) {
    this.target = redactStoreTarget(path);
  }

  private open(): Promise<Store> {
    return (this.store ??= import("../store/open.js").then((m) => m.openStore(this.path)));
  }

  async limits(): Promise<SinkLimits> {
    return { batchSize: 1000, batchBytes: 64 * 1024 * 1024 };
  }

  async send(ops: Op[]): Promise<void> {
    let store: Store;
    try {
      store = await this.open();
    } catch (err) {
      // A store that could not open (an unwritable directory, a bundle without the native driver)
      // is retried like any failed send, so the next attempt opens afresh.
      this.store = undefined;
      throw new SinkError(`opening ${this.target} failed: ${(err as Error).message}`, "retry");
    }
    const posts = ops.filter((o) => o.kind === "post");
    const patches = ops.filter((o) => o.kind === "patch");
    const feedback = ops.filter((o) => o.kind === "feedback");
    const attachments: AttachmentInput[] = [];
    for (const o of ops) {
      for (const [name, [mime, data]] of Object.entries(o.attachments ?? {})) {
        const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
        attachments.push({ runId: o.id, name, contentType: mime, data: buf, sha256: createHash("sha256").update(buf).digest("hex") });
      }
    }
    try {
      await store.ingest({
        post: posts.map((o) => o.run),
        patch: patches.map((o) => o.run),
        attachments,
        // The same locations the collector's multipart route reports.
        locate: (kind, i) => [`${kind}.${(kind === "post" ? posts : patches)[i]!.id}`],
      });
      if (feedback.length)
        await store.storeFeedback(
          feedback.map((o) => o.run),
          (i) => [`feedback.${feedback[i]!.id}`],
        );
      this.announce();
    } catch (err) {
      // Refused like the collector's 422: the client bisects the batch and dead-letters the bad run.
      if (err instanceof ValidationError) throw new SinkError(`${this.target} refused the batch: ${err.message}`, "fatal", 422, err.issues);
      // A store that cannot answer now (locked, busy, unreachable) is worth retrying; anything else will not get better.
      throw new SinkError(
        `writing ${this.target} failed: ${(err as Error).message}`,
        err instanceof StoreUnavailableError ? "retry" : "fatal",
      );
    }
  }

  /** With no endpoint configured, the first stored runs say where they went and how to see them. */
  private announce(): void {
    const url = isStoreUrl(this.path);
    const where = url || this.path === ":memory:" ? this.target : resolve(this.path);
    if (announced.has(where)) return;
    announced.add(where);
    const serve = url ? `--store ${JSON.stringify(where)}` : `--db ${JSON.stringify(where)}`;
    process.emitWarning(
      `tracepipe: no endpoint configured (TRACEPIPE_ENDPOINT), so runs are stored in ${where}; see them with \`npx tracepipe serve ${serve}\``,
      "TracepipeWarning",
    );
  }

  async close(): Promise<void> {
    const pending = this.store;
    this.store = undefined;
    if (pending) await (await pending.catch(() => undefined))?.close();
  }
}
