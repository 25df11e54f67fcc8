/**
 * Attachments: files sent with runs (multipart ingest). They are written by
 * the runs' own `ingest`, in the same transaction; read back as exact bytes.
 */

/** A file sent with a run. */
export interface AttachmentInput {
  runId: string;
  name: string;
  contentType?: string;
  data: Buffer;
  sha256: string;
}

/** What a run's attachment list shows (no bytes). */
export interface AttachmentInfo {
  name: string;
  content_type: string | null;
  size: number;
  sha256: string;
}

/** One attachment with its bytes. */
export interface StoredAttachment extends AttachmentInfo {
  data: Buffer;
}

export interface AttachmentStore {
  /** A run's attachments by name; empty when it has none. */
  listAttachments(runId: string): Promise<AttachmentInfo[]>;
  /** One attachment (run id, name), bytes as received; undefined when there is none. */
  getAttachment(runId: string, name: string): Promise<StoredAttachment | undefined>;
}
