/**
 * `tracepipe prune --older-than 30d [--db PATH | --store URL]`: remove whole
 * traces whose root started before the cut-off, with their attachments and
 * pieces (docs/deploy.md "Retention"), once, then exit. `serve --retention`
 * does the same every hour.
 */
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { isStoreUrl, storeTargetFrom } from "../env.js";
import { parseDuration } from "./duration.js";
import { EXIT_USAGE } from "./exit.js";

interface PruneCliOptions {
  olderThan: number;
  db?: string;
  store?: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command("prune")
    .summary("remove traces older than a cut-off from the store")
    .description(
      [
        "Remove whole traces whose root run started before now minus --older-than, with their runs, attachments and large-field pieces, and the OTLP spans staged for traces that started before then. Deletes go a slice of traces at a time, so a collector using the same store keeps ingesting meanwhile; PostgreSQL drops whole weekly partitions where it can.",
        "The store: --store URL (postgres://...) or --db PATH, else TRACEPIPE_STORE_URL, else TRACEPIPE_DB, else .tracepipe/traces.db.",
      ].join("\n\n"),
    )
    .requiredOption("--older-than <duration>", "the age past which traces go: 30d, 12h, 90m or 2w", parseDuration("--older-than"))
    .option("--db <path>", "the SQLite file")
    .option("--store <url>", "the store: a postgres:// URL (or a SQLite path)")
    .option("--json", "print the result as one JSON line")
    .action(async (opts: PruneCliOptions) => {
      if (opts.db !== undefined && opts.store !== undefined) {
        process.stderr.write("tracepipe prune: give --db or --store, not both\n");
        process.exitCode = EXIT_USAGE;
        return;
      }
      const target = storeTargetFrom(opts);
      // Opening a SQLite path makes a store there: a mistyped path would be "pruned" of nothing, and left behind.
      if (!isStoreUrl(target) && target !== ":memory:" && !existsSync(target)) {
        process.stderr.write(`tracepipe prune: no trace store at ${target} (set --db, --store, TRACEPIPE_DB or TRACEPIPE_STORE_URL)\n`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      const { openStore } = await import("../store/open.js");
      const store = await openStore(target);
      try {
        const cutoff = new Date(Date.now() - opts.olderThan);
        const r = await store.pruneTraces(cutoff);
        if (opts.json) console.log(JSON.stringify({ cutoff: cutoff.toISOString(), ...r }));
        else if (r.skipped) {
          // The prune under way (a collector's --retention) removes the same old traces; this one has nothing to add.
          console.log(`tracepipe prune: another process is pruning ${store.target} now; nothing removed by this run`);
        } else {
          const parts = r.partitionsDropped.length ? `, ${r.partitionsDropped.length} whole partitions dropped` : "";
          console.log(
            `tracepipe prune: removed ${r.runs} runs and ${r.attachments} attachments of traces that started before ${cutoff.toISOString()}${parts} (${store.target})`,
          );
        }
      } finally {
        await store.close();
      }
    });
}
