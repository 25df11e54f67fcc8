import { configDefaults, defineConfig } from "vitest/config";
import { skipWithoutPostgres } from "./test/helpers/postgres.js";
import LongestFirst from "./test/helpers/sequencer.js";

/** The PostgreSQL project runs where PostgreSQL is installed, and under CI (where its absence fails); elsewhere a notice says it was skipped. */
const postgres = !skipWithoutPostgres();

/**
 * Files that only call functions in this process: no server or socket (an idle keep-alive
 * socket keeps a shared worker from exiting), child process, environment or global tracer
 * that outlives them. They share a worker's modules (isolate off), so each worker imports
 * zod, the adapters and the token counter once rather than once per file. Module state they touch (the token counter's caches,
 * the price table) is reset by the files themselves.
 */
const UNIT = [
  "test/adapters/*.test.ts",
  "test/format/*.test.ts",
  "test/run/*.test.ts",
  "test/tokens/*.test.ts",
  "test/internal/*.test.ts",
  "test/normalize.test.ts",
  "test/structure/*.test.ts",
  "test/ratelimit/limiter.test.ts",
  "test/ratelimit/match.test.ts",
  "test/otel/genai-events.test.ts",
  "test/otel/openinference.test.ts",
  "test/otel/vercel-ai.test.ts",
  "test/store/model-identity.test.ts",
  "test/store/run-fast-check.test.ts",
  "test/ingest/merge-copies.test.ts",
  "test/ingest/multipart-bytes.test.ts",
  "test/ingest/privacy.test.ts",
  "test/backfill/times.test.ts",
];

/**
 * Files that start loopback collectors, stores and SQLite files in this process and close them
 * when they end (afterEach/afterAll or finally), and touch no environment, global tracer,
 * process handler, timer mock or module mock. They share a worker too (isolate off): starting a
 * worker and importing vitest, zod, the store, the server and the adapters once per file cost
 * more than most of these files' own tests. A worker left with an idle socket is stopped by
 * vitest when the run ends. A CLI child they start has ended when its test does. Files that keep
 * `serve` collectors running, start their own PostgreSQL cluster or redis, a browser or the
 * OpenTelemetry SDK keep a worker of their own.
 */
const SHARED = [
  "test/server/middleware/*.test.ts",
  "test/server/checked-ingest.test.ts",
  "test/server/collector.test.ts",
  "test/server/costs.test.ts",
  "test/server/otlp.test.ts",
  "test/server/otlp-logs.test.ts",
  "test/server/otlp-roots.test.ts",
  "test/store/derive-on-read.test.ts",
  "test/store/group-commit.test.ts",
  "test/store/retention.test.ts",
  "test/store/same-refusals.test.ts",
  "test/store/sqlite.test.ts",
  "test/viewer/content-not-captured.test.ts",
  "test/viewer/insights-api.test.ts",
  "test/viewer/runless-logs.test.ts",
  "test/viewer/store-upgrade.test.ts",
  "test/viewer/webhooks.test.ts",
  "test/webhooks/ssrf.test.ts",
  "test/webhooks/webhooks.test.ts",
  "test/backfill/bedrock-converse.test.ts",
  "test/backfill/formats.test.ts",
  "test/backfill/gemini.test.ts",
  "test/backfill/lines.test.ts",
  "test/backfill/otlp.test.ts",
  "test/control/control-plane.test.ts",
  "test/cli/store-target.test.ts",
  "test/package/services.test.ts",
  "test/cli/globs.test.ts",
  "test/cli/help.test.ts",
  "test/cli/normalize.test.ts",
  "test/cli/validate-normalized.test.ts",
  "test/backfill/costs.test.ts",
  "test/store/sqlite-batch-load.test.ts",
  "test/docs.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Loopback servers and SQLite files per test file. Much of the suite waits on child
    // processes (the CLI, serve, backfill kills) and on PostgreSQL, so a third worker on two
    // cores overlaps those waits; more would starve the processes they wait on, and the
    // tests that time a child or a collector would fail on a busy machine.
    pool: "forks",
    // A whole-suite run builds a stale dist/ first (test/helpers/build-setup.ts); the run's shared
    // PostgreSQL cluster is started by the first file that needs it (test/helpers/postgres.ts).
    globalSetup: ["test/helpers/build-setup.ts", "test/helpers/postgres-setup.ts"],
    sequence: { sequencer: LongestFirst },
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: "unit", include: UNIT, isolate: false } },
      { extends: true, test: { name: "shared", include: SHARED, isolate: false } },
      {
        extends: true,
        test: { name: "default", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...UNIT, ...SHARED] },
      },
      ...(postgres
        ? [
            {
              // The collector's end-to-end tests once more with PostgreSQL as its store (test/helpers/collector.ts):
              // the langsmith SDK's traffic, OTLP, the viewer's API, hostile input. Skipped with a notice without PostgreSQL.
              extends: true,
              test: {
                name: "postgres",
                include: [
                  "test/compat/langsmith.test.ts",
                  "test/server/otlp.test.ts",
                  "test/server/hostile.test.ts",
                  "test/viewer/api.test.ts",
                ],
                env: { TRACEPIPE_TEST_STORE: "postgres" },
              },
            },
          ]
        : []),
    ],
  },
});
