/**
 * Batch request files joined to their results by `custom_id`, without holding
 * them in memory: the request bodies go into a scratch SQLite file (one row
 * per custom_id), and each result line looks its request up. A million
 * requests cost disk, not RSS.
 */
import { ScratchTable } from "../store/scratch.js";

export class RequestIndex {
  private readonly table = new ScratchTable<[string, string, string]>(
    "tracepipe-join-",
    "CREATE TABLE req (family TEXT NOT NULL, custom_id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (family, custom_id)) WITHOUT ROWID",
    "INSERT OR REPLACE INTO req (family, custom_id, body) VALUES (?, ?, ?)",
    5000,
  );
  private readonly get = this.table.query<[string, string], { body: string }>("SELECT body FROM req WHERE family = ? AND custom_id = ?");
  size = 0;

  add(family: string, customId: string, body: unknown): void {
    this.table.add([family, customId, JSON.stringify(body)]);
    this.size++;
  }

  commit(): void {
    this.table.commit();
  }

  lookup(family: string, customId: string): unknown {
    const row = this.get.get(family, customId);
    return row ? JSON.parse(row.body) : undefined;
  }

  close(): void {
    this.table.close();
  }
}
