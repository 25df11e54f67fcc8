/**
 * A V8 CPU profile (node:inspector's Profiler) summarized as the collector's
 * request stages: each sample goes to the innermost frame on its stack that
 * belongs to a stage (so JSON.parse called from multipart.ts is multipart
 * parsing, and stream plumbing called from busboy is too).
 */

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** Stage names in the order benchmarks print them. */
export const STAGES = [
  "http in (parser, middleware, body stream)",
  "multipart parsing (busboy, parts, JSON.parse)",
  "checks (depth, schemas, issues)",
  "store write (merge, derive, SQLite)",
  "route glue",
  "response",
  "garbage collection",
  "other (runtime, sockets, timers)",
] as const;
export type Stage = (typeof STAGES)[number];

const RULES: [RegExp, Stage][] = [
  [/\/node_modules\/(busboy|streamsearch)\/|\/src\/server\/(multipart|gc)\./, STAGES[1]],
  [
    /\/node_modules\/zod\/|\/src\/store\/validate\.|\/src\/server\/(validation|depth|issues)\.|\/src\/internal\/(json-depth|slicer)\.|\/src\/run\/schema\.|\/src\/errors\./,
    STAGES[2],
  ],
  [/\/node_modules\/better-sqlite3\/|\/src\/store\//, STAGES[3]],
  [/\/src\/server\/routes\//, STAGES[4]],
  [/^node:_http_outgoing|\/src\/server\/http\./, STAGES[5]],
  [/^node:_http_(server|common|incoming)|\/src\/server\/(body|router|app|http-error)\.|\/src\/server\/middleware\//, STAGES[0]],
];

/**
 * Each stage's share of the non-idle samples. Shares, not the samples' time
 * deltas: the sampler ticks on wall time, so on a busy machine a delta also
 * holds the time the thread waited for a core.
 */
export function stagesOf(profile: CpuProfile): Record<Stage, number> {
  const parent = new Map<number, number>();
  const byId = new Map<number, CpuProfile["nodes"][number]>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const stageOf = new Map<number, Stage | null>();
  const classify = (id: number): Stage | null => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    const n = byId.get(id)!;
    const name = n.callFrame.functionName;
    let s: Stage | null;
    if (name === "(idle)") s = null;
    else if (name === "(garbage collector)") s = STAGES[6];
    else {
      const rule = RULES.find(([re]) => re.test(n.callFrame.url));
      const up = parent.get(id);
      s = rule ? rule[1] : up !== undefined ? classify(up) : STAGES[7];
    }
    stageOf.set(id, s);
    return s;
  };
  const out = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  let busy = 0;
  for (const id of profile.samples) {
    const s = classify(id);
    if (!s) continue;
    out[s]++;
    busy++;
  }
  for (const s of STAGES) out[s] /= Math.max(1, busy);
  return out;
}
