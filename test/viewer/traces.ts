/** Known traces for the viewer's tests and benchmark, built as producers build them. */
import { randomUUID } from "node:crypto";

/** A 1x1 PNG. */
export const PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

function stamp(iso: string): string {
  // 2026-11-22T10:00:00.123456Z -> 20261122T100000123456Z (DESIGN "Run record")
  return iso.replace(/[-:]/g, "").replace(".", "");
}

function micro(base: number, offsetUs: number): string {
  const ms = base + Math.floor(offsetUs / 1000);
  const us = String(offsetUs % 1000).padStart(3, "0");
  return new Date(ms).toISOString().replace("Z", `${us}Z`);
}

/**
 * One trace of `n` runs: a root of 2.5 s and n-1 children in a chain of
 * depth 3 (parent, child, grandchild), each with its own offset and duration.
 */
export function bulkTrace(n: number, opts: { name?: string; project?: string; startMs?: number } = {}): Record<string, unknown>[] {
  const base = opts.startMs ?? Date.parse("2026-11-22T10:00:00.000Z");
  const root = randomUUID();
  const rootStart = micro(base, 0);
  const runs: Record<string, unknown>[] = [
    {
      id: root,
      trace_id: root,
      dotted_order: `${stamp(rootStart)}${root}`,
      name: opts.name ?? "bulk-500",
      run_type: "chain",
      start_time: rootStart,
      end_time: micro(base, 2_500_000),
      inputs: { n },
      outputs: { ok: true },
      session_name: opts.project ?? "viewer",
    },
  ];
  let parent = { id: root, dotted: `${stamp(rootStart)}${root}` };
  for (let i = 1; i < n; i++) {
    const id = randomUUID();
    const start = micro(base, i * 4000);
    const p = i % 3 === 1 ? { id: root, dotted: `${stamp(rootStart)}${root}` } : parent;
    const dotted = `${p.dotted}.${stamp(start)}${id}`;
    runs.push({
      id,
      trace_id: root,
      parent_run_id: p.id,
      dotted_order: dotted,
      name: `step-${i}`,
      run_type: i % 2 ? "tool" : "chain",
      start_time: start,
      end_time: micro(base, i * 4000 + 3000),
      inputs: { i },
      outputs: { i },
      session_name: opts.project ?? "viewer",
    });
    parent = { id, dotted };
  }
  return runs;
}

const XSS_TEXT = "<img src=x onerror=alert(1)>";
const xssId = randomUUID();
const xssStart = "2026-11-22T09:00:00.000000Z";

/** A native llm run whose text (both sides) and name are HTML that would run script if interpreted. */
export const XSS = {
  text: XSS_TEXT,
  name: "<script>alert(2)</script>",
  run: {
    id: xssId,
    trace_id: xssId,
    dotted_order: `${stamp(xssStart)}${xssId}`,
    name: "<script>alert(2)</script>",
    run_type: "llm",
    start_time: xssStart,
    end_time: "2026-11-22T09:00:01.000000Z",
    session_name: "viewer",
    inputs: { messages: [{ role: "user", content: [{ type: "text", text: XSS_TEXT }] }] },
    outputs: {
      messages: [
        {
          role: "assistant",
          content: [{ type: "text", text: XSS_TEXT }],
          usage_metadata: { input_tokens: 9, output_tokens: 9, total_tokens: 18 },
        },
      ],
    },
    extra: { metadata: { trace_provider: "openai", trace_model_name: "gpt-4o" } },
  },
};
