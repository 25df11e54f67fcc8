// Runs `tracepipe runs ...` as a real process until src/cli/index.ts registers the command.
import { Command } from "commander";
import { register } from "../../src/cli/runs.js";

const program = new Command("tracepipe").exitOverride();
register(program);
try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.exitCode = (err as { exitCode?: number }).exitCode === 0 ? 0 : 2;
}
