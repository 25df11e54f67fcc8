/** Durations on the command line (`--retention 30d`, `prune --older-than 12h`): a whole number and a unit. */
import { InvalidArgumentError } from "commander";

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Milliseconds in `30d`, `12h`, `90m` or `2w`; throws InvalidArgumentError (a usage error, exit 2) naming the option otherwise. */
export function parseDuration(option: string): (value: string) => number {
  return (value: string) => {
    const m = /^\s*(\d+)\s*([mhdw])\s*$/i.exec(value);
    const ms = m ? Number(m[1]) * UNIT_MS[m[2]!.toLowerCase()]! : NaN;
    if (!Number.isSafeInteger(ms) || ms <= 0)
      throw new InvalidArgumentError(
        `${option} must be a positive whole number of minutes, hours, days or weeks, such as 30d, 12h, 90m or 2w; got ${JSON.stringify(value)}`,
      );
    return ms;
  };
}
