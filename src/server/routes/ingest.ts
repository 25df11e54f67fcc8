/**
 * Ingest endpoints: /info, /runs/multipart, /runs/batch, POST /runs, PATCH /runs/:id, POST /feedback.
 *
 * Before the store's one ingest operation sees a request, the route bounds it
 * (docs/collector-api.md "Limits"): the batch size /info advertises (413), JSON
 * depth (422 with `loc`), and a pre-check with the same Run / RunPatch
 * schemas that is sliced (other requests are served meanwhile), lists at most
 * 100 problems and stops counting at 10,000. That check is the store's own
 * (BatchCheck): what passes it reaches `ingest` as a CheckedBatch and is not
 * checked again, and the collector and the embedded sink still accept and
 * refuse the same runs.
 */
import type { Route, RequestContext } from "../http.js";
import { HttpError } from "../http-error.js";
import { ValidationError } from "../../errors.js";
import type { CheckedBatch, RunStore, StoredRun } from "../../store/contract/runs.js";
import type { FeedbackStore } from "../../store/contract/feedback.js";
import { checkFeedback, type RawText, type RecordToCheck } from "../../store/validate.js";
import { uuidv7 } from "../../run/ids.js";
import type { StoreHealth } from "../../store/contract/store.js";
import { parseMultipart } from "../multipart.js";
import { batchCheck } from "../validation.js";
import { Slicer } from "../../internal/slicer.js";
import { IssueList } from "../issues.js";
import { depthIssue, documentsTooDeep, tooDeep } from "../depth.js";
import type { CollectorLimits } from "../limits.js";
import type { LimiterScope } from "../../ratelimit/limiter.js";

export interface IngestDeps {
  store: RunStore & FeedbackStore;
  version: string;
  limits: CollectorLimits;
  /** Told about root runs that now have an end time; when absent, nothing is read back after storing. */
  onRunCompleted?: (run: StoredRun) => void;
  /** The SPEC §8 limits as GET /info reports them: whether enforced, and whether counted by this collector alone or shared (Redis). */
  rateLimits?: { enabled: boolean; scope: LimiterScope; region: string };
  /** Told the ids of root runs that now have an end time, without reading them back (the webhook delivery loop claims at once). */
  onRootsCompleted?: (ids: readonly string[]) => void;
  /** Whether the store's database answers (GET /info `store`). */
  health?: () => Promise<StoreHealth>;
}

/** /info waits this long for the store to answer before saying it does not. */
const HEALTH_WAIT_MS = 1000;

/** The store's health, or "no answer" once HEALTH_WAIT_MS has passed: /info itself never waits on a slow database. */
async function storeHealth(health: () => Promise<StoreHealth>): Promise<StoreHealth> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<StoreHealth>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, error: `the store did not answer within ${HEALTH_WAIT_MS} ms` }), HEALTH_WAIT_MS);
  });
  try {
    return await Promise.race([
      health().catch((err: unknown): StoreHealth => ({ ok: false, error: (err as Error)?.message ?? String(err) })),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** What /info advertises, enforced: the run count always, the byte size when there is more than one run to split. */
function checkBatch(limits: CollectorLimits, runs: number, bytes: number): void {
  if (runs > limits.batchSizeLimit)
    throw new HttpError(
      413,
      `${runs} runs in one request, over the limit of ${limits.batchSizeLimit} (GET /info batch_ingest_config.size_limit); split the batch`,
    );
  if (runs > 1 && bytes > limits.batchSizeBytesLimit) {
    throw new HttpError(
      413,
      `a batch of ${runs} runs in ${bytes} bytes, over the limit of ${limits.batchSizeBytesLimit} bytes (GET /info batch_ingest_config.size_limit_bytes); split the batch`,
    );
  }
}

/** A multipart request's posts or patches as BatchCheck.each takes them, each located by its part's name. */
function* toCheck(
  kind: "post" | "patch",
  runs: Map<string, Record<string, unknown>>,
  raw: Map<Record<string, unknown>, RawText>,
): Iterable<RecordToCheck> {
  for (const [id, value] of runs) yield { value, prefix: [`${kind}.${id}`], raw: raw.get(value) };
}

const newIssues = (limits: CollectorLimits) => new IssueList(limits.maxListedIssues, limits.maxCountedIssues);

/**
 * The store's one ingest operation (validate -> merge -> derive -> store): an
 * invalid record is a 422 listing every problem, and nothing is stored. Root
 * runs that now have an end time are handed to the completion hook.
 */
async function store(deps: IngestDeps, batch: CheckedBatch): Promise<{ created: number; updated: number; attachments: number }> {
  let result;
  try {
    result = await deps.store.ingest(batch);
  } catch (err) {
    if (err instanceof ValidationError) throw new HttpError(422, err.issues);
    throw err;
  }
  if (result.completedRoots.length) deps.onRootsCompleted?.(result.completedRoots);
  if (deps.onRunCompleted) {
    for (const id of result.completedRoots) {
      const run = await deps.store.getRun(id);
      if (run) deps.onRunCompleted(run);
    }
  }
  return { created: result.created, updated: result.updated, attachments: result.attachments };
}

async function storeFeedback(deps: IngestDeps, records: readonly unknown[], locate?: (i: number) => (string | number)[]): Promise<number> {
  try {
    return await deps.store.storeFeedback(records, locate);
  } catch (err) {
    if (err instanceof ValidationError) throw new HttpError(422, err.issues);
    throw err;
  }
}

export function ingestRoutes(deps: IngestDeps): Route[] {
  const { limits } = deps;
  return [
    {
      method: "GET",
      path: "/info",
      handler: async () => ({
        status: 200,
        body: {
          version: deps.version,
          // Said here so a load balancer or an operator sees a database that is away (writes get 503 meanwhile).
          ...(deps.health ? { store: await storeHealth(deps.health) } : {}),
          batch_ingest_config: {
            use_multipart_endpoint: true,
            size_limit: limits.batchSizeLimit,
            size_limit_bytes: limits.batchSizeBytesLimit,
            max_body_bytes: limits.maxBodyBytes,
            max_json_depth: limits.maxJsonDepth,
            supports_gzip: true,
          },
          // Said outright, not left out: LangSmith SDKs read this flag, and some (the Java one) take a
          // missing flag as yes and send zstd bodies, which this collector cannot read (Node 20 has no
          // zstd): they would get 415 and lose their runs.
          instance_flags: { zstd_compression_enabled: false },
          // Collectors behind one load balancer keep SPEC §8's limits together only with a shared limiter:
          // "process" says each counts alone (docs/deploy.md).
          ...(deps.rateLimits ? { rate_limits: deps.rateLimits } : {}),
          in_flight_limit: limits.maxInFlight,
        },
      }),
    },
    {
      method: "POST",
      path: "/runs/multipart",
      handler: async (ctx: RequestContext) => {
        const issues = newIssues(limits);
        const body = ctx.stream();
        const parsed = await parseMultipart(
          body,
          ctx.headers,
          { maxPartBytes: limits.maxBodyBytes, maxParts: limits.maxMultipartParts, maxRuns: limits.batchSizeLimit },
          issues,
        );
        checkBatch(limits, parsed.post.size + parsed.patch.size, body.bytes);
        const slicer = new Slicer();
        // Depth first: zod and the store recurse, so nothing too deep may reach them.
        let tooDeepFound = false;
        await documentsTooDeep(parsed.documents, limits.maxJsonDepth, slicer, (loc) => {
          issues.push(depthIssue(loc, limits.maxJsonDepth));
          tooDeepFound = true;
        });
        if (tooDeepFound) issues.fail();
        parsed.documents.length = 0;
        const check = batchCheck(issues, slicer);
        await check.each("post", toCheck("post", parsed.post, parsed.raw));
        await check.each("patch", toCheck("patch", parsed.patch, parsed.raw));
        const feedbackParts = [...parsed.feedback.keys()];
        const feedback = [...parsed.feedback.values()];
        if (feedback.length && !issues.full) {
          try {
            checkFeedback(feedback, (i) => [feedbackParts[i]!]);
          } catch (err) {
            if (!(err instanceof ValidationError)) throw err;
            issues.push(...err.issues);
          }
        }
        issues.throwIfAny();
        // The checked records (and their texts) are all the store needs: the parsed parts go now.
        parsed.post.clear();
        parsed.patch.clear();
        parsed.raw.clear();
        // One transaction for the runs and their attachments: nothing half-written.
        const result = await store(deps, check.batch(parsed.attachments));
        // After the runs: a retried batch stores both again, each idempotent by id.
        const stored = feedback.length ? await storeFeedback(deps, feedback, (i) => [feedbackParts[i]!]) : 0;
        return { status: 202, body: stored ? { ...result, feedback: stored } : result };
      },
    },
    {
      // LangSmith's createFeedback when it does not batch: one record, answered with what was stored.
      method: "POST",
      path: "/feedback",
      handler: async (ctx) => {
        const body = await ctx.json();
        if (typeof body !== "object" || body === null || Array.isArray(body))
          throw new HttpError(400, "expected a JSON object (a feedback record)");
        const deep = await tooDeep(body, limits.maxJsonDepth, new Slicer());
        if (deep) throw new HttpError(422, [depthIssue(deep, limits.maxJsonDepth)]);
        // The SDKs send an id; a sender that does not gets one, as LangSmith gives it.
        const record: Record<string, unknown> = { id: uuidv7(), ...(body as Record<string, unknown>) };
        await storeFeedback(deps, [record], () => []);
        const stored = (await deps.store.feedbackOf([record.run_id as string])).find((f) => f.id === record.id);
        return { status: 200, body: stored };
      },
    },
    {
      method: "POST",
      path: "/runs/batch",
      handler: async (ctx) => {
        const raw = await ctx.body();
        const body = await ctx.parse(raw);
        if (typeof body !== "object" || body === null || Array.isArray(body))
          throw new HttpError(400, 'expected a JSON object {"post": [...], "patch": [...]}');
        const b = body as { post?: unknown; patch?: unknown };
        const issues = newIssues(limits);
        const check = batchCheck(issues, new Slicer());
        const lists = [
          ["post", b.post],
          ["patch", b.patch],
        ] as const;
        checkBatch(
          limits,
          lists.reduce((n, [, l]) => n + (Array.isArray(l) ? l.length : 0), 0),
          raw.length,
        );
        for (const [key, list] of lists) {
          if (list === undefined || list === null) continue;
          if (!Array.isArray(list)) {
            issues.push({ loc: [key], msg: "expected an array", type: "list_type" });
            continue;
          }
          for (let i = 0; i < list.length && !issues.full; i++) {
            if (key === "post") await check.post(list[i], [key, i]);
            else await check.patch(list[i], [key, i]);
          }
        }
        issues.throwIfAny();
        const { created, updated } = await store(deps, check.batch());
        return { status: 202, body: { created, updated } };
      },
    },
    {
      method: "POST",
      path: "/runs",
      handler: async (ctx) => {
        const issues = newIssues(limits);
        const check = batchCheck(issues, new Slicer());
        if (!(await check.post(await ctx.json(), []))) return issues.fail();
        const { created, updated } = await store(deps, check.batch());
        return { status: 202, body: { created, updated } };
      },
    },
    {
      method: "PATCH",
      path: "/runs/:id",
      handler: async (ctx) => {
        const body = await ctx.json();
        if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError(400, "expected a JSON object");
        const b = body as Record<string, unknown>;
        if (b.id !== undefined && b.id !== ctx.params.id)
          throw new HttpError(400, `body id ${JSON.stringify(b.id)} does not match the path id ${JSON.stringify(ctx.params.id)}`);
        const issues = newIssues(limits);
        const check = batchCheck(issues, new Slicer());
        if (!(await check.patch({ ...b, id: ctx.params.id }, []))) return issues.fail();
        const { created, updated } = await store(deps, check.batch());
        return { status: 202, body: { created, updated } };
      },
    },
  ];
}
