/**
 * The order test files start in. vitest runs the longest files first once its
 * cache holds their durations from an earlier run; a fresh clone has none, and
 * a long file started last keeps one worker busy while the others sit idle.
 * So, with no durations known, the files known to be longest start first.
 *
 * The files of a project that shares its workers (isolate off) then run one
 * after another: vitest keeps a worker for the next file only when that file
 * is next in line and of the same project, and otherwise stops it and starts
 * a fresh one, so files of such a project spread among the others would each
 * pay for a new worker and its imports after all.
 */
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Longest first, as measured on an idle two-core machine. */
const LONGEST = [
  "test/store/postgres.test.ts",
  "test/package/entry.test.ts",
  "test/backfill/cli.test.ts",
  "test/backfill/kill.test.ts",
  "test/package/types.test.ts",
  "test/server/collectors-otlp.test.ts",
  "test/backfill/faults.test.ts",
  "test/server/collectors-runs.test.ts",
  "test/ingest/client.test.ts",
  "test/viewer/viewer.test.ts",
  "test/server/collectors-overload.test.ts",
  "test/package/cli.test.ts",
  "test/webhooks/collectors.test.ts",
  "test/adapters/property.test.ts",
  "test/store/pieces.test.ts",
  "test/viewer/insights.test.ts",
  "test/backfill/partial-failures.test.ts",
  "test/ratelimit/redis.test.ts",
  "test/otel/sdk3-types.test.ts",
  "test/viewer/runs-cli.test.ts",
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const path = (f: TestSpecification) => relative(root, f.moduleId);
    const rank = (f: TestSpecification) => {
      const i = LONGEST.indexOf(path(f));
      return i < 0 ? LONGEST.length : i;
    };
    // vitest's own cache of durations orders them already.
    const cached = sorted.some((f) => this.ctx.cache.getFileTestResults(`${f.project.name}:${path(f)}`));
    const longestFirst = cached ? sorted : [...sorted].sort((a, b) => rank(a) - rank(b));
    const ownWorker = longestFirst.filter((f) => f.project.config.isolate !== false);
    const sharing = longestFirst.filter((f) => f.project.config.isolate === false);
    const projects = [...new Set(sharing.map((f) => f.project.name))];
    return [...ownWorker, ...projects.flatMap((name) => sharing.filter((f) => f.project.name === name))];
  }
}
