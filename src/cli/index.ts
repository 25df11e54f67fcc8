/**
 * `tracepipe` command line. One file per command; each exports `register(program)`.
 * Exit codes (DESIGN.md): 0 success, 1 some records invalid, 2 usage error.
 */
import { Command, CommanderError } from "commander";
import { register as registerNormalize } from "./normalize.js";
import { register as registerValidate } from "./validate.js";
import { register as registerServe } from "./serve.js";
import { register as registerBackfill } from "./backfill.js";
import { register as registerCheckConfig } from "./check-config.js";

import { EXIT_OK, EXIT_USAGE } from "./exit.js";

export { EXIT_OK, EXIT_INVALID, EXIT_USAGE } from "./exit.js";

export function buildProgram(): Command {
  const program = new Command("tracepipe")
    .description("Trace LLM calls: normalize vendor formats, collect and deliver runs.")
    .showHelpAfterError()
    .exitOverride();
  registerNormalize(program);
  registerValidate(program);
  registerServe(program);
  registerBackfill(program);
  registerCheckConfig(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  // `tracepipe normalize big.jsonl | head` closes stdout early: stop quietly, as Unix tools do.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? EXIT_OK);
    throw err;
  });
  const program = buildProgram();
  try {
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


