/**
 * Sharding: `--shard i/n` runs n processes over the same files, each taking
 * the records whose number n leaves remainder i. The number is the line's
 * (line - 1) for line formats and a hash of the trace id for OTLP files, so a
 * trace is never cut in two.
 */
import { ConfigError } from "../errors.js";

export interface ShardSpec {
  index: number;
  count: number;
}

/** Whether this process takes record `n` (every record when not sharded). */
export type Owns = (n: number) => boolean;

export function shardFilter(shard: ShardSpec | undefined): Owns {
  if (!shard) return () => true;
  const { index, count } = shard;
  if (!(Number.isInteger(count) && count >= 1 && Number.isInteger(index) && index >= 0 && index < count)) {
    throw new ConfigError([{ loc: ["shard"], msg: `expected i/n with 0 <= i < n, got ${index}/${count}`, type: "value_error" }]);
  }
  return (n) => n % count === index;
}

/** A trace id's shard number: its last 32 bits. */
export function traceNumber(traceId: string): number {
  return parseInt(traceId.slice(-8), 16) || 0;
}
