/**
 * The chat.completion.chunk stream the benchmarks read (overhead-upstream.ts
 * sends it over HTTP, stream-counters.ts from memory): an SSE body of `chunks`
 * chunks, a role chunk, word deltas and a finish chunk, then `[DONE]`.
 */
export const MODEL = "gpt-4o-mini-2024-07-18";

const chunk = (delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1763800000, model: MODEL, system_fingerprint: "fp_bench", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
const words = ["Par", "is", " is", " the", " capital", " of", " France", "."];

export function chatSse(chunks: number): string {
  let sse = chunk({ role: "assistant", content: "", refusal: null }, null);
  for (let i = 0; i < chunks - 2; i++) sse += chunk({ content: words[i % words.length] }, null);
  return sse + chunk({}, "stop") + "data: [DONE]\n\n";
}
