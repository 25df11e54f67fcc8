/** Generated historical logs for the backfill tests and benchmark: deterministic, any size, written as a stream. */
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { once } from "node:events";
import { createGzip } from "node:zlib";
import { rng } from "../../benchmarks/corpus.js";

/** One generic-log line: alternately an OpenAI and an Anthropic call, some streamed-style with TTFT, some without usage. */
export function genericLine(i: number, salt = ""): string {
  const start = Date.UTC(2026, 0, 1) + i * 1000;
  if (i % 2 === 0) {
    const response: Record<string, unknown> = {
      id: `chatcmpl-${i}`,
      object: "chat.completion",
      created: Math.floor(start / 1000),
      model: "gpt-4o-mini-2024-07-18",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: `The answer is ${i + 1}.`, refusal: null },
          finish_reason: "stop",
          logprobs: null,
        },
      ],
    };
    if (i % 4 === 0) response.usage = { prompt_tokens: 21, completion_tokens: 6, total_tokens: 27 };
    return JSON.stringify({
      request: {
        model: "gpt-4o-mini",
        temperature: 0,
        messages: [
          { role: "system", content: "Be terse." },
          { role: "user", content: `What is ${i} + 1?` },
        ],
      },
      response,
      start_time: new Date(start).toISOString(),
      end_time: new Date(start + 400).toISOString(),
      time_to_first_token_ms: 95,
      metadata: salt ? { user: `u${i % 7}`, salt } : { user: `u${i % 7}` },
    });
  }
  return JSON.stringify({
    request: {
      model: "claude-sonnet-4-5",
      max_tokens: 128,
      system: "Be terse.",
      messages: [{ role: "user", content: `What is ${i} + 1?` }],
    },
    response: {
      id: `msg_${i}`,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [{ type: "text", text: `${i + 1}` }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 14, output_tokens: 2 },
    },
    start_time: start,
    tags: salt ? ["backfill-test", salt] : ["backfill-test"],
  });
}

/**
 * Write `n` generic lines to `path` (gzip when it ends in .gz); a fraction
 * `corrupt` of them is broken JSON. Returns the 1-based numbers of the broken lines.
 * Files with the same lines are the same file to backfill (same ids); a
 * `salt` (written into each record's metadata) makes a distinct one.
 */
export async function writeGenericLog(path: string, n: number, corrupt = 0, seed = 1, salt = ""): Promise<number[]> {
  const rnd = rng(seed); // seeded, so a corrupted line's number is known in advance
  const bad: number[] = [];
  const file = createWriteStream(path);
  const out = path.endsWith(".gz") ? createGzip() : file;
  if (out !== file) out.pipe(file);
  let buf = "";
  for (let i = 0; i < n; i++) {
    if (corrupt > 0 && rnd() < corrupt) {
      bad.push(i + 1);
      buf += `{"request": {"model": "gpt-4o" BROKEN ${i}\n`;
    } else buf += genericLine(i, salt) + "\n";
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await once(out, "drain");
      buf = "";
    }
  }
  out.end(buf);
  await once(file, "close");
  return bad;
}

/**
 * The runs a backfill stored in a SQLite store file, read with SQL so the
 * count does not depend on the store's code: how many rows, how many distinct
 * ids, and the source line of each (sorted).
 */
export async function storedLines(dbPath: string, project: string): Promise<{ n: number; d: number; lines: number[] }> {
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const { n, d } = db.prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM runs WHERE session_name = ?").get(project) as {
      n: number;
      d: number;
    };
    const lines = (
      db
        .prepare("SELECT json_extract(extra, '$.metadata.backfill.line') AS line FROM runs WHERE session_name = ? ORDER BY 1")
        .all(project) as { line: number }[]
    ).map((r) => r.line);
    return { n, d, lines };
  } finally {
    db.close();
  }
}

/** The line numbers in a backfill dead-letter file, in file order (empty when there is none). */
export function deadLetterLines(path: string): number[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => (JSON.parse(l) as { line: number }).line);
}
