/** Deployments and revisions in SQLite: each a JSON document, with the columns it is found and ordered by. */
import type Database from "better-sqlite3";
import type { Obj } from "../../internal/obj.js";
import type { DeploymentRecord, RevisionRecord } from "../contract/deployments.js";

interface DeploymentRow {
  id: string;
  name: string;
  body: string;
  created_at: string;
  updated_at: string;
}

interface RevisionRow {
  id: string;
  deployment_id: string;
  body: string;
  created_at: string;
}

export class SqliteDeployments {
  constructor(private readonly db: Database.Database) {}

  private addRevision(r: RevisionRecord): void {
    this.db
      .prepare("INSERT INTO revisions (id, deployment_id, body, created_at) VALUES (?, ?, ?, ?)")
      .run(r.id, r.deployment_id, JSON.stringify(r.body), r.created_at);
  }

  create(d: DeploymentRecord, first: RevisionRecord): boolean {
    return this.db.transaction(() => {
      // Checked and inserted in one write transaction: no other writer comes between (the name is UNIQUE as well).
      if (this.db.prepare("SELECT 1 FROM deployments WHERE name = ?").get(d.name)) return false;
      this.db
        .prepare("INSERT INTO deployments (id, name, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")
        .run(d.id, d.name, JSON.stringify(d.body), d.created_at, d.updated_at);
      this.addRevision(first);
      return true;
    })();
  }

  get(id: string): DeploymentRecord | undefined {
    const row = this.db.prepare("SELECT id, name, body, created_at, updated_at FROM deployments WHERE id = ?").get(id) as
      DeploymentRow | undefined;
    return row && { ...row, body: JSON.parse(row.body) as Obj };
  }

  update(id: string, body: Obj, updatedAt: string, revision?: RevisionRecord, ifUpdatedAt?: string): boolean {
    return this.db.transaction(() => {
      const changed = this.db
        .prepare("UPDATE deployments SET body = ?, updated_at = ? WHERE id = ? AND (? IS NULL OR updated_at = ?)")
        .run(JSON.stringify(body), updatedAt, id, ifUpdatedAt ?? null, ifUpdatedAt ?? null).changes;
      if (changed === 0) return false;
      if (revision) this.addRevision(revision);
      return true;
    })();
  }

  revisions(deploymentId: string): RevisionRecord[] {
    const rows = this.db
      .prepare("SELECT id, deployment_id, body, created_at FROM revisions WHERE deployment_id = ? ORDER BY created_at, id")
      .all(deploymentId) as RevisionRow[];
    return rows.map((r) => ({ ...r, body: JSON.parse(r.body) as Obj }));
  }
}
