/**
 * SPEC §8's rate-limit table, whole, as data. Each row: what it matches, whose
 * identity it counts against, the count per interval (US and EU, equal unless
 * SPEC gives two values), and the category.
 *
 * Matching (see match.ts): a plain path is a prefix match on a segment
 * boundary; `exact`, `contains`, `suffix` and `regex` say otherwise. A row
 * with `methods` applies only to those methods.
 */

export type Identity = "ip" | "x-api-key" | "x-user-id+ip";

export type PathMatch = { exact: string } | { prefix: string } | { contains: string } | { suffix: string } | { regex: RegExp };

export interface LimitRule {
  /** Stable id, used in limiter keys so different rows count separately. */
  id: string;
  /** Any of these matches (SPEC writes some rows as "A or B"). An empty list matches every request. */
  match: { methods?: string[]; path?: PathMatch }[];
  identity: Identity;
  limit: { us: number; eu: number };
  intervalSeconds: number;
  category: string;
  /** Fallback rows (the defaults and the catch-all) apply only when no specific row does. */
  fallback?: boolean;
}

const both = (n: number) => ({ us: n, eu: n });
const UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

export const RATE_LIMITS: readonly LimitRule[] = [
  {
    id: "info",
    match: [{ methods: ["OPTIONS"] }, { path: { prefix: "/info" } }, { path: { suffix: "/v1/metadata/submit" } }],
    identity: "ip",
    limit: both(2000),
    intervalSeconds: 10,
    category: "High throughput",
  },
  {
    id: "auth-key",
    match: [{ path: { prefix: "/auth" } }],
    identity: "x-api-key",
    limit: both(2000),
    intervalSeconds: 10,
    category: "High throughput",
  },
  {
    id: "auth-user",
    match: [{ path: { prefix: "/auth" } }],
    identity: "x-user-id+ip",
    limit: both(2000),
    intervalSeconds: 10,
    category: "High throughput",
  },
  {
    id: "beacon",
    match: [{ path: { prefix: "/v1/beacon" } }],
    identity: "ip",
    limit: both(2000),
    intervalSeconds: 10,
    category: "High throughput",
  },
  {
    id: "repos-key",
    match: [{ path: { prefix: "/repos" } }],
    identity: "x-api-key",
    limit: both(100),
    intervalSeconds: 60,
    category: "Repository",
  },
  {
    id: "repos-user",
    match: [{ path: { prefix: "/repos" } }],
    identity: "x-user-id+ip",
    limit: both(100),
    intervalSeconds: 60,
    category: "Repository",
  },
  {
    id: "runs-batch",
    match: [{ methods: ["POST"], path: { exact: "/runs/batch" } }],
    identity: "x-api-key",
    limit: both(2000),
    intervalSeconds: 10,
    category: "High throughput",
  },
  // OTLP ingest, traces and logs, at SPEC's path and at the standard base path: one budget per key.
  {
    id: "otel-traces",
    match: ["/otel/v1/traces", "/v1/traces", "/otel/v1/logs", "/v1/logs"].map((exact) => ({ methods: ["POST"], path: { exact } })),
    identity: "x-api-key",
    limit: both(2000),
    intervalSeconds: 10,
    category: "Run ingest",
  },
  {
    id: "charts-key",
    match: [{ methods: ["POST"], path: { contains: "/charts" } }],
    identity: "x-api-key",
    limit: both(750),
    intervalSeconds: 600,
    category: "Charts",
  },
  {
    id: "charts-user",
    match: [{ methods: ["POST"], path: { contains: "/charts" } }],
    identity: "x-user-id+ip",
    limit: both(750),
    intervalSeconds: 600,
    category: "Charts",
  },
  {
    id: "runs-multipart",
    match: [{ methods: ["POST"], path: { exact: "/runs/multipart" } }],
    identity: "x-api-key",
    limit: both(6000),
    intervalSeconds: 10,
    category: "Multipart ingest",
  },
  {
    id: "runs-query-key",
    match: [{ methods: ["POST"], path: { exact: "/runs/query" } }],
    identity: "x-api-key",
    limit: both(15),
    intervalSeconds: 10,
    category: "Run query (API)",
  },
  {
    id: "runs-query-user",
    match: [{ methods: ["POST"], path: { exact: "/runs/query" } }],
    identity: "x-user-id+ip",
    limit: both(300),
    intervalSeconds: 10,
    category: "Run query (User)",
  },
  {
    id: "generate-key",
    match: [{ path: { prefix: "/generate" } }],
    identity: "x-api-key",
    limit: both(30),
    intervalSeconds: 3600,
    category: "Generation",
  },
  {
    id: "generate-user",
    match: [{ path: { prefix: "/generate" } }],
    identity: "x-user-id+ip",
    limit: both(30),
    intervalSeconds: 3600,
    category: "Generation",
  },
  {
    id: "commits-key",
    match: [{ path: { prefix: "/commits" } }],
    identity: "x-api-key",
    limit: { us: 10000, eu: 2000 },
    intervalSeconds: 60,
    category: "Commits",
  },
  {
    id: "commits-user",
    match: [{ path: { prefix: "/commits" } }],
    identity: "x-user-id+ip",
    limit: { us: 10000, eu: 2000 },
    intervalSeconds: 60,
    category: "Commits",
  },
  {
    id: "deletion-key",
    match: [{ methods: ["DELETE"], path: { prefix: "/sessions" } }, { path: { suffix: "/trigger" } }],
    identity: "x-api-key",
    limit: both(10),
    intervalSeconds: 60,
    category: "Deletion",
  },
  {
    id: "deletion-user",
    match: [{ methods: ["DELETE"], path: { prefix: "/sessions" } }, { path: { suffix: "/trigger" } }],
    identity: "x-user-id+ip",
    limit: both(30),
    intervalSeconds: 60,
    category: "Deletion",
  },
  {
    id: "runs-post",
    match: [{ methods: ["POST"], path: { exact: "/runs" } }],
    identity: "x-api-key",
    limit: both(2000),
    intervalSeconds: 10,
    category: "Run ingest",
  },
  {
    id: "runs-patch",
    match: [{ methods: ["PATCH"], path: { contains: "/runs" } }],
    identity: "x-api-key",
    limit: both(2000),
    intervalSeconds: 10,
    category: "Run ingest",
  },
  {
    id: "feedback",
    match: [{ methods: ["POST"], path: { prefix: "/feedback" } }],
    identity: "x-api-key",
    limit: both(2000),
    intervalSeconds: 10,
    category: "High throughput",
  },
  {
    id: "run-lookup",
    match: [{ methods: ["GET"], path: { regex: new RegExp(`^(/api/v1)?/runs/${UUID}$`) } }],
    identity: "x-api-key",
    limit: both(30),
    intervalSeconds: 60,
    category: "Run lookup",
  },
  {
    id: "examples",
    match: [{ methods: ["GET"], path: { contains: "/examples" } }],
    identity: "x-api-key",
    limit: both(5000),
    intervalSeconds: 60,
    category: "Examples",
  },
  {
    id: "default-key",
    match: [],
    identity: "x-api-key",
    limit: both(1000),
    intervalSeconds: 10,
    category: "Default (API key)",
    fallback: true,
  },
  {
    id: "default-user",
    match: [],
    identity: "x-user-id+ip",
    limit: both(1000),
    intervalSeconds: 10,
    category: "Default (User)",
    fallback: true,
  },
  {
    id: "public-download",
    match: [{ path: { prefix: "/public/download" } }],
    identity: "ip",
    limit: both(5000),
    intervalSeconds: 60,
    category: "Public download",
  },
  {
    id: "runs-stats",
    match: [{ path: { prefix: "/runs/stats" } }],
    identity: "x-api-key",
    limit: { us: 1, eu: 20 },
    intervalSeconds: 10,
    category: "Stats",
  },
  { id: "catch-all", match: [], identity: "ip", limit: both(100), intervalSeconds: 60, category: "Public (catch-all)", fallback: true },
];
