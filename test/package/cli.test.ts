import { beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command, Help } from "commander";
import { COMMANDS, commandOf } from "../../src/cli/index.js";
import { ensureBuilt, probeLoads, ROOT } from "./dist.js";

const BIN = join(ROOT, "bin/tracepipe.js");
const tracepipe = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, TRACEPIPE_ENDPOINT: "" } });

beforeAll(() => ensureBuilt(), 180_000);

describe("the CLI loads a command's modules only when that command runs", () => {
  it("lists each command as the command itself describes it", async () => {
    for (const [name, entry] of Object.entries(COMMANDS)) {
      const program = new Command("tracepipe");
      (await entry.load()).register(program);
      const cmd = program.commands.find((c) => c.name() === name)!;
      expect(cmd, name).toBeDefined();
      expect(entry.term).toBe(new Help().subcommandTerm(cmd));
      expect(entry.summary).toBe(cmd.summary());
    }
  });

  it("finds the command to load among the arguments", () => {
    expect(commandOf(["--help"])).toBeUndefined();
    expect(commandOf(["serve", "--port", "0"])).toBe("serve");
    expect(commandOf(["help", "backfill"])).toBe("backfill");
    expect(commandOf(["-h", "check-config", "x.json"])).toBe("check-config");
  });

  it("`tracepipe --help` loads commander and nothing else; normalize and validate load no collector, SQLite, Redis or OTel", () => {
    const help = probeLoads(ROOT, BIN, ["--help"]);
    expect(help.packages).toEqual(["commander"]);
    for (const name of Object.keys(COMMANDS)) expect(help.stdout).toContain(COMMANDS[name]!.summary.split(" ").slice(0, 3).join(" "));
    for (const cmd of ["normalize", "validate"]) {
      const { packages } = probeLoads(ROOT, BIN, [cmd, "--help"]);
      expect(
        packages.filter(
          (p) =>
            ["better-sqlite3", "pg", "busboy", "protobufjs", "ioredis", "cli-progress", "tiktoken"].includes(p) ||
            p.startsWith("@opentelemetry/"),
        ),
        cmd,
      ).toEqual([]);
    }
  });

  // Two processes per command, one after another: with both cores busy each start takes seconds.
  it("every command has --help (and `help <command>` says the same); --version prints the package version", () => {
    for (const name of Object.keys(COMMANDS)) {
      const r = tracepipe(name, "--help");
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: tracepipe ${name} `));
      expect(tracepipe("help", name).stdout).toBe(r.stdout);
    }
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const r = tracepipe(flag);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
    const unknown = tracepipe("frobnicate");
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  }, 180_000);
});
