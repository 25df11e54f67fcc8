/**
 * Runs a recording step; a failure of the recorder itself is swallowed. Tracing
 * never throws into the host: the host's call is unaffected, its run may be incomplete.
 */
export function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // the run may lack its end; the caller's call is unaffected
  }
}

/** What a thrown value says, for a run's error or a warning: `Name: message` for an Error. Never throws. */
export function errorText(err: unknown): string {
  try {
    if (err instanceof Error) return `${err.name}: ${err.message}`;
    return String(err);
  } catch {
    return "unprintable";
  }
}

/** A thrown value's message alone (or the value as text). Never throws. */
export function errorMessage(err: unknown): string {
  try {
    return String((err as Error)?.message ?? err);
  } catch {
    return "unprintable";
  }
}
