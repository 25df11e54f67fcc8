/**
 * Threads: the root runs (turns) that carry one conversation id in their
 * metadata (`session_id`, `thread_id` or `conversation_id`, the keys LangSmith
 * reads, in that order), as a conversation. Messages are sent as short text
 * (store/preview.ts), never as the runs.
 */

export interface ThreadSummary {
  thread_id: string;
  project: string | null;
  turns: number;
  first_time: string;
  last_time: string;
  /** The user's message of the first turn, the assistant's answer of the last. */
  first_message: string | null;
  last_message: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  cost: number | null;
  /** Summed over the turns. */
  latency_ms: number | null;
  error_count: number;
}

export interface ThreadTurn {
  trace_id: string;
  name: string | null;
  start_time: string | null;
  end_time: string | null;
  latency_ms: number | null;
  error: string | null;
  user: string | null;
  assistant: string | null;
  total_tokens: number | null;
  cost: number | null;
}

export interface ThreadQuery {
  project?: string;
  limit?: number;
  /** Threads whose last turn started before this (ISO time). */
  before?: string;
  /** The next page: `next_cursor` of the page before (threads whose last turns started at the same time are neither skipped nor repeated). */
  cursor?: string;
}

export interface ThreadPage {
  threads: ThreadSummary[];
  /** The page's last thread's last_time when more follow (a time, for `before`; threads sharing it may be skipped). */
  next_before: string | null;
  /** When more follow, the cursor that reads the next page. */
  next_cursor: string | null;
}

export interface ThreadStore {
  /** Threads, most recently active first. */
  listThreads(q: ThreadQuery): Promise<ThreadPage>;
  /** One thread's turns in order (oldest first); empty when no run carries the id. */
  threadTurns(threadId: string, project?: string): Promise<ThreadTurn[]>;
}
