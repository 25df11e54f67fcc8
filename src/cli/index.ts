/**
 * `tracepipe` command line. One file per command; each exports `register(program)`.
 * Exit codes (DESIGN.md): 0 success, 1 some records invalid, 2 usage error.
 *
 * Only the command being run is loaded: its modules pull in the collector,
 * SQLite, Redis or the progress bar, and `tracepipe --help` should cost little
 * more than starting node. The other commands are listed from COMMANDS by name
 * and summary (test/package/cli.test.ts checks those against the real ones).
 */
import { packageVersion } from "../internal/package-root.js";
import { Command, CommanderError, Help } from "commander";
import { EXIT_OK, EXIT_USAGE } from "./exit.js";

export { EXIT_OK, EXIT_INVALID, EXIT_USAGE } from "./exit.js";

export interface CommandEntry {
  /** As the top-level help lists it: name, `[options]`, arguments. */
  term: string;
  summary: string;
  load: () => Promise<{ register: (program: Command) => void }>;
}

export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  normalize: {
    term: "normalize [options] [files...]",
    summary: "normalize vendor payloads into native messages",
    load: () => import("./normalize.js"),
  },
  validate: { term: "validate [options] [files...]", summary: "check native {messages} records", load: () => import("./validate.js") },
  serve: {
    term: "serve [options]",
    summary: "run the local collector (ingest API over SQLite or PostgreSQL)",
    load: () => import("./serve.js"),
  },
  backfill: {
    term: "backfill [options] <files...>",
    summary: "turn historical LLM logs into runs, resumably",
    load: () => import("./backfill.js"),
  },
  "check-config": {
    term: "check-config <file>",
    summary: "check the webhooks and http sections of a graph.json",
    load: () => import("./check-config.js"),
  },
  runs: { term: "runs [options]", summary: "look at stored traces in the terminal", load: () => import("./runs.js") },
  prune: { term: "prune [options]", summary: "remove traces older than a cut-off from the store", load: () => import("./prune.js") },
};

/** The command an argument list runs (`help X` shows X's help): the first operand, since no global option takes a value. */
export function commandOf(args: readonly string[]): string | undefined {
  const operands = args.filter((a) => !a.startsWith("-"));
  return operands[0] === "help" ? operands[1] : operands[0];
}

/**
 * Columns to wrap help to: the terminal's, or `COLUMNS` when output is piped (as
 * `man` and GNU tools do, so `COLUMNS=60 tracepipe backfill --help | less` fits), else 80.
 */
export function helpWidth(stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): number {
  if (stream.isTTY && stream.columns) return stream.columns;
  const cols = Number(env.COLUMNS);
  return Number.isInteger(cols) && cols > 0 ? cols : 80;
}

/** The program with `command` loaded in full (when it names one) and the others as listings. */
export async function buildProgram(command?: string): Promise<Command> {
  const program = new Command("tracepipe")
    .description("Trace LLM calls: normalize vendor formats, collect and deliver runs.")
    .version(packageVersion(), "-V, --version", "print the tracepipe version")
    .showHelpAfterError()
    .exitOverride();
  const defaultTerm = new Help().subcommandTerm.bind(new Help());
  // Descriptions are written as paragraphs and wrapped here, to the terminal; option
  // descriptions still wrap in a narrow column (commander's default gives up below 40).
  program.configureHelp({ subcommandTerm: (cmd) => COMMANDS[cmd.name()]?.term ?? defaultTerm(cmd), minWidthToWrap: 20 });
  program.configureOutput({ getOutHelpWidth: () => helpWidth(process.stdout), getErrHelpWidth: () => helpWidth(process.stderr) });
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (name === command) (await entry.load()).register(program);
    else program.command(name).summary(entry.summary);
  }
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  // `tracepipe normalize big.jsonl | head` closes stdout early: stop quietly, as Unix tools do.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? EXIT_OK);
    throw err;
  });
  try {
    const program = await buildProgram(commandOf(argv.slice(2)));
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; every other commander error is a usage error.
      process.exitCode = err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
      return;
    }
    console.error(`tracepipe: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = EXIT_USAGE;
  }
}
