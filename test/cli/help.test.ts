import { describe, expect, it } from "vitest";
import type { Command } from "commander";
import { buildProgram, COMMANDS, helpWidth } from "../../src/cli/index.js";
import { runCli } from "../helpers/cli.js";

/** Every command and subcommand of the fully loaded program for `name`. */
function walk(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(walk)];
}

describe("help text", () => {
  it("wraps to COLUMNS when piped: no line of any command's --help is longer than 60", async () => {
    const invocations = [[], ...Object.keys(COMMANDS).map((c) => [c]), ["runs", "list"], ["runs", "show"], ["runs", "tail"]];
    const results = await Promise.all(invocations.map((args) => runCli([...args, "--help"], { env: { COLUMNS: "60" } })));
    results.forEach((r, i) => {
      const name = invocations[i]!.join(" ") || "tracepipe";
      expect(r.code, name).toBe(0);
      expect(
        r.stdout.split("\n").filter((l) => l.length > 60),
        name,
      ).toEqual([]);
    });
    // And the width follows COLUMNS: at 200 the normalize description is not cut at 80.
    const wide = await runCli(["normalize", "--help"], { env: { COLUMNS: "200" } });
    expect(wide.stdout.split("\n").some((l) => l.length > 100)).toBe(true);
  }, 240_000);

  it("writes descriptions as paragraphs: no hard line break inside one, so commander does the wrapping", async () => {
    for (const name of Object.keys(COMMANDS)) {
      const program = await buildProgram(name);
      for (const cmd of walk(program)) {
        const texts = [cmd.description(), ...cmd.options.map((o) => o.description), ...cmd.registeredArguments.map((a) => a.description)];
        for (const t of texts) expect(t.replace(/\n\n/g, ""), `${name} / ${cmd.name()}: ${t.slice(0, 40)}`).not.toContain("\n");
      }
    }
  });

  it("takes the width from the terminal, else COLUMNS, else 80", () => {
    expect(helpWidth({ isTTY: true, columns: 101 }, { COLUMNS: "60" })).toBe(101);
    expect(helpWidth({ isTTY: false }, { COLUMNS: "60" })).toBe(60);
    expect(helpWidth({}, { COLUMNS: "wide" })).toBe(80);
    expect(helpWidth({}, {})).toBe(80);
  });
});
