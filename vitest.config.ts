import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Loopback servers and SQLite files per test file. Much of the suite waits on child
    // processes (the CLI, serve, backfill kills), so a third worker on two cores overlaps
    // those waits (122–130 s instead of 138–147 s here) without starving the timing-checked tests.
    pool: "forks",
    maxWorkers: 3,
  },
});
