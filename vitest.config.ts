import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Loopback servers and SQLite files per test file; two cores, so keep it modest.
    pool: "forks",
    maxWorkers: 2,
  },
});
