/**
 * POST /otel/v1/traces (OTLP/HTTP, JSON or protobuf). Spans are stored as they
 * came, attributes intact, in `otel_spans`; the answer is OTLP's
 * ExportTraceServiceResponse.
 *
 * Spans also become runs, with the same span adapters and conversion as the
 * client's TraceSpanProcessor (src/otel/convert.ts): once a root of the trace
 * has arrived (roots end last, so the rest of a process's trace is in by
 * then), the whole stored trace is converted and ingested. A root is the
 * trace's root span, or a span whose parent the exporter flagged as remote:
 * the first span of a service called by another (an HTTP server span under
 * the caller's `traceparent`), whose caller may export elsewhere or not at
 * all; the span processor takes such a span as a root too. Run ids are stable
 * functions of the spans, so a span that arrives after its root converts the
 * trace again and upserts the same runs (when the caller's spans arrive too,
 * the callee's runs move under them).
 *
 * A trace with no root stored is converted as it is once no span of it has
 * come for `rootlessAfterMs` (RootlessSweep): its parent is in a process whose
 * exporter did not flag it remote (SDKs before OTLP 1.1), or the process that
 * held its root died. Its topmost spans are roots until the root comes.
 */
import type { Route } from "../http.js";
import type { RunStore } from "../../store/contract/runs.js";
import type { SpanStore } from "../../store/contract/spans.js";

/** What OTLP ingest needs of the store: span staging, and runs to ingest. */
type OtlpStore = RunStore & SpanStore;
import { decodeOtlp } from "../otlp.js";
import { traceToRuns } from "../../otel/convert.js";
import { isLocalRoot, parseJson, plainToSpanRecord, PROJECT_HEADER } from "../../otel/otlp-json.js";

/** Default quiet time before a trace without a root is converted as it is: a few of BatchSpanProcessor's 5 s export intervals. */
export const DEFAULT_ROOTLESS_AFTER_MS = 30_000;

/** Convert a stored trace and ingest its runs; `project` (the request's) wins over the one its spans carry. */
async function convertTrace(store: OtlpStore, traceId: string, project?: string): Promise<void> {
  const rows = await store.spansOfTrace(traceId);
  const root = rows.find((r) => !r.parent_span_id) ?? rows.find(isLocalRoot) ?? rows[0];
  const traceProject = project ?? parseJson<Record<string, unknown>>(root?.resource, {})["tracepipe.project"];
  const runs = traceToRuns(rows.map(plainToSpanRecord), { project: typeof traceProject === "string" ? traceProject : undefined });
  if (!runs.length) return;
  // A post only fills what a stored run lacks; where a run sits can change between conversions (its
  // root came late, a kept span between it and its parent came late), so that is patched: the newest wins.
  const placement = runs.map((r) => ({ id: r.id, trace_id: r.trace_id, dotted_order: r.dotted_order, ...(r.parent_run_id ? { parent_run_id: r.parent_run_id } : {}) }));
  await store.ingest({ post: runs, patch: placement });
}

export function otelRoutes(store: OtlpStore, maxJsonDepth = Infinity): Route[] {
  return [
    {
      method: "POST",
      path: "/otel/v1/traces",
      handler: async (ctx) => {
        const spans = await decodeOtlp(await ctx.body(), String(ctx.headers["content-type"] ?? ""), maxJsonDepth);
        // The project an exporter names (createOtlpTraceExporter's `project`) travels with the spans.
        const header = ctx.headers[PROJECT_HEADER];
        const project = typeof header === "string" && header ? header : undefined;
        if (project) {
          for (const s of spans) s.resource = JSON.stringify({ ...(JSON.parse(s.resource) as Record<string, unknown>), "tracepipe.project": project });
        }
        for (const traceId of await store.storeSpans(spans)) await convertTrace(store, traceId, project);
        return { status: 200, body: { partialSuccess: {} } };
      },
    },
  ];
}

/** Trace ids read from the store at a time. */
const SWEEP_BATCH = 100;
/** The sweep yields to the event loop once it has converted for this long, so requests interleave with a backlog. */
const SWEEP_SLICE_MS = 20;

/**
 * Converts the traces that have waited `quietMs` for a root without a new
 * span (see the module comment). Checks every quietMs / 4 (at least 50 ms, at
 * most 5 s). A backlog (a store from before this sweep existed holds every
 * rootless trace it ever got) is converted in slices of SWEEP_SLICE_MS, the
 * event loop served in between. A trace that fails to convert is left out,
 * with a warning, rather than tried forever.
 */
export class RootlessSweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: OtlpStore,
    private readonly quietMs: number,
    private readonly warn: (msg: string) => void = (m) => process.emitWarning(m, "TracepipeWarning"),
  ) {
    this.timer = setInterval(() => void this.sweep(), Math.min(5000, Math.max(50, quietMs / 4)));
    this.timer.unref();
  }

  /** One sweep (at most one at a time); resolves when the traces quiet by now are converted. Never rejects. */
  sweep(): Promise<void> {
    this.running ??= this.drain()
      // The store failing under it (busy, closed, a full disk) waits for the next sweep; it must not
      // become an unhandled rejection in a timer, which ends the process.
      .catch((err: unknown) => {
        this.warn(`tracepipe collector: the sweep of OTLP traces without a root failed: ${(err as Error)?.message ?? String(err)}`);
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async drain(): Promise<void> {
    const quietSince = new Date(Date.now() - this.quietMs).toISOString();
    let sliceStart = performance.now();
    for (;;) {
      if (this.stopped) return;
      const ids = await this.store.quietRootlessTraces(quietSince, SWEEP_BATCH);
      for (const id of ids) {
        if (this.stopped) return;
        try {
          await convertTrace(this.store, id);
        } catch (err) {
          this.warn(`tracepipe collector: OTLP trace ${id} (no root span) was not converted: ${(err as Error).message}`);
        }
        await this.store.forgetRootless(id, quietSince);
        if (performance.now() - sliceStart >= SWEEP_SLICE_MS) {
          await new Promise((r) => setImmediate(r));
          sliceStart = performance.now();
        }
      }
      if (ids.length < SWEEP_BATCH) return;
    }
  }

  /** Stop sweeping; resolves once a sweep under way has stopped (before the store closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }
}
