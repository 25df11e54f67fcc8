/**
 * A client of several collectors behind an imaginary load balancer: each
 * attempt goes to a collector picked at random, and a connection error or a
 * 5xx (a collector killed, restarting, busy) is sent again, to any of them,
 * after the Retry-After it was given (or a short pause). What a real client
 * does; the multi-collector tests count on it for "nothing lost". It has no
 * deadline of its own unless given one: the test's time bounds it, so a
 * starved machine slows the test down instead of failing it.
 */
import type { ServeChild } from "./serve-processes.js";

export interface Sent {
  status: number;
  body: string;
  /** Attempts that failed (connection error or 5xx) before this answer. */
  retries: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function sendAnywhere(
  children: readonly ServeChild[],
  method: string,
  path: string,
  body: string | Uint8Array | undefined,
  headers: Record<string, string> = { "content-type": "application/json" },
  o: { random?: () => number; deadlineMs?: number } = {},
): Promise<Sent> {
  const random = o.random ?? Math.random;
  const deadline = o.deadlineMs === undefined ? Infinity : Date.now() + o.deadlineMs;
  for (let retries = 0; ; retries++) {
    const c = children[Math.floor(random() * children.length)]!;
    let wait = 50;
    try {
      const res = await fetch(c.url + path, { method, headers, body, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      if (res.status < 500) return { status: res.status, body: text, retries };
      const after = Number(res.headers.get("retry-after"));
      if (Number.isFinite(after) && after > 0) wait = Math.min(after * 1000, 1000);
    } catch {
      // Refused or reset: that collector is down; any other may take it.
    }
    if (Date.now() > deadline) throw new Error(`${method} ${path}: no collector took it within the deadline`);
    await sleep(wait);
  }
}

/** A seeded generator (mulberry32), so a failing order can be replayed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `xs` in an order drawn from `random` (Fisher–Yates). */
export function shuffled<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
