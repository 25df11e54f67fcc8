/** Projects in SQLite; deleting one takes its runs, their attachments and pieces with it, in one transaction. */
import type Database from "better-sqlite3";
import type { Project } from "../contract/projects.js";

export class SqliteProjects {
  private readonly ensureStmt: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.ensureStmt = db.prepare("INSERT OR IGNORE INTO projects (name, created_at) VALUES (?, ?)");
  }

  /** The project, created at `at` unless it exists (ingest calls this for every run it stores). */
  ensure(name: string, at: string): void {
    this.ensureStmt.run(name, at);
  }

  exists(name: string): boolean {
    return this.db.prepare("SELECT 1 FROM projects WHERE name = ?").get(name) !== undefined;
  }

  /** Newest first. */
  list(): Project[] {
    return this.db.prepare("SELECT name, created_at FROM projects ORDER BY created_at DESC, name").all() as Project[];
  }

  delete(name: string): number {
    return this.db.transaction(() => {
      this.db.prepare("DELETE FROM attachments WHERE run_id IN (SELECT id FROM runs WHERE session_name = ?)").run(name);
      this.db.prepare("DELETE FROM feedback WHERE run_id IN (SELECT id FROM runs WHERE session_name = ?)").run(name);
      this.db.prepare("DELETE FROM webhook_outbox WHERE run_id IN (SELECT id FROM runs WHERE session_name = ?)").run(name);
      this.db.prepare("DELETE FROM run_pieces WHERE run_id IN (SELECT id FROM runs WHERE session_name = ?)").run(name);
      const n = this.db.prepare("DELETE FROM runs WHERE session_name = ?").run(name).changes;
      this.db.prepare("DELETE FROM projects WHERE name = ?").run(name);
      return n;
    })();
  }
}
