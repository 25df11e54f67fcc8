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
      { extends: true, test: { name: "default", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...UNIT] } },
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
