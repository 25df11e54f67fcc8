/**
 * Batch request files joined to their results by `custom_id`, without holding
 * them in memory: the request bodies go into a temporary SQLite file (one row
 * per custom_id), and each result line looks its request up. A million
 * requests cost disk, not RSS.
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class RequestIndex {
  private readonly dir: string;
  private readonly db: Database.Database;
  private readonly put: Database.Statement<[string, string, string]>;
  private readonly get: Database.Statement<[string, string], { body: string }>;
  private pending: [string, string, string][] = [];
  size = 0;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "tracepipe-join-"));
    this.db = new Database(join(this.dir, "requests.db"));
    this.db.pragma("journal_mode = OFF");
    this.db.pragma("synchronous = OFF");
    this.db.exec("CREATE TABLE req (family TEXT NOT NULL, custom_id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (family, custom_id)) WITHOUT ROWID");
    this.put = this.db.prepare("INSERT OR REPLACE INTO req (family, custom_id, body) VALUES (?, ?, ?)");
    this.get = this.db.prepare("SELECT body FROM req WHERE family = ? AND custom_id = ?");
  }

  add(family: string, customId: string, body: unknown): void {
    this.pending.push([family, customId, JSON.stringify(body)]);
    this.size++;
    if (this.pending.length >= 5000) this.commit();
  }

  commit(): void {
    if (!this.pending.length) return;
    const rows = this.pending;
    this.pending = [];
    this.db.transaction(() => {
      for (const r of rows) this.put.run(...r);
    })();
  }

  lookup(family: string, customId: string): unknown {
    const row = this.get.get(family, customId);
    return row ? JSON.parse(row.body) : undefined;
  }

  close(): void {
    this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
