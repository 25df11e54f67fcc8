/**
 * `tracepipe` command line. One file per command; each exports `register(program)`.
 * Exit codes (DESIGN.md): 0 success, 1 some records invalid, 2 usage error.
 */
import { Command, CommanderError } from "commander";
import { register as registerNormalize } from "./normalize.js";
import { register as registerValidate } from "./validate.js";

export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;

export function buildProgram(): Command {
  const program = new Command("tracepipe")
    .description("Trace LLM calls: normalize vendor formats, collect and deliver runs.")
    .showHelpAfterError()
    .exitOverride();
  registerNormalize(program);
  registerValidate(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
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


