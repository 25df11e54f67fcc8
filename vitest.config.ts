import { defineConfig } from "vitest/config";
import { skipWithoutPostgres } from "./test/helpers/postgres.js";
import LongestFirst from "./test/helpers/sequencer.js";

/** The PostgreSQL project runs where PostgreSQL is installed, and under CI (where its absence fails); elsewhere a notice says it was skipped. */
const postgres = !skipWithoutPostgres();

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Loopback servers and SQLite files per test file. Much of the suite waits on child
    // processes (the CLI, serve, backfill kills), so a third worker on two cores overlaps
    // those waits (122–130 s instead of 138–147 s here) without starving the timing-checked tests.
    pool: "forks",
    // The run's shared PostgreSQL cluster, started by the first file that needs it (test/helpers/postgres.ts).
    globalSetup: ["test/helpers/postgres-setup.ts"],
    sequence: { sequencer: LongestFirst },
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: "default", include: ["test/**/*.test.ts"] } },
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
