/**
 * One backfill at a time per checkpoint and per dead-letter file. Two processes
 * on the same checkpoint (a cron job started again while the last one still
 * runs, two shards given one --dead-letter) would write the same temp file and
 * rename it under each other, and one would cut the dead-letter file back
 * while the other appends to it. A lock file beside each (`<path>.lock`,
 * holding the owner's pid) makes the second process stop with a usage error
 * instead. A lock whose process is gone (killed) is taken over.
 */
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError } from "../errors.js";

/** Locks this process holds, so a second backfill in the same process is refused too. */
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function ownerOf(lock: string): number | undefined {
  try {
    const pid = Number(readFileSync(lock, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function inUse(path: string, what: string, pid: number): ConfigError {
  return new ConfigError([
    {
      loc: [what],
      msg: `${path} is in use by another backfill (pid ${pid}); wait for it to finish, or give this one its own --${what}`,
      type: "in_use",
    },
  ]);
}

/** Take the lock on `path` for this process; `what` names the option in the error. Returns its release. */
export function lockPath(path: string, what: string): () => void {
  const lock = `${path}.lock`;
  if (held.has(lock)) throw inUse(path, what, process.pid);
  mkdirSync(dirname(lock), { recursive: true });
  // Written whole first and then linked: link fails if the lock exists, and a lock is never seen empty.
  const mine = `${lock}.${process.pid}`;
  writeFileSync(mine, String(process.pid));
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(mine, lock);
        held.add(lock);
        return () => {
          held.delete(lock);
          if (ownerOf(lock) === process.pid) unlinkSync(lock);
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const pid = ownerOf(lock);
      // Our own pid in a lock we do not hold is a previous life's (a container restarted after a kill
      // runs its backfill under the same pid again): as stale as a dead one.
      if (pid !== undefined && pid !== process.pid && alive(pid)) throw inUse(path, what, pid);
      if (attempt >= 2)
        throw new ConfigError([{ loc: [what], msg: `cannot take ${lock}; remove it if no backfill is running`, type: "in_use" }]);
      try {
        unlinkSync(lock); // left by a process that no longer runs
      } catch {
        // Another process took it over first: look again.
      }
    }
  } finally {
    unlinkSync(mine);
  }
}
