/** Attachments in SQLite: one row per (run id, name), the bytes as a BLOB. */
import type Database from "better-sqlite3";
import type { AttachmentInfo, AttachmentInput, StoredAttachment } from "../contract/attachments.js";

export class SqliteAttachments {
  private readonly putStmt: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.putStmt = db.prepare(
      "INSERT OR REPLACE INTO attachments (run_id, name, content_type, size, sha256, data) VALUES (?, ?, ?, ?, ?, ?)",
    );
  }

  /** Inside ingest's transaction: attachments ride with runs in multipart ingest; a second one of a name replaces the first. */
  put(a: AttachmentInput): void {
    this.putStmt.run(a.runId, a.name, a.contentType ?? null, a.data.length, a.sha256, a.data);
  }

  list(runId: string): AttachmentInfo[] {
    return this.db
      .prepare("SELECT name, content_type, size, sha256 FROM attachments WHERE run_id = ? ORDER BY name")
      .all(runId) as AttachmentInfo[];
  }

  get(runId: string, name: string): StoredAttachment | undefined {
    return this.db
      .prepare("SELECT name, content_type, size, sha256, data FROM attachments WHERE run_id = ? AND name = ?")
      .get(runId, name) as StoredAttachment | undefined;
  }
}
