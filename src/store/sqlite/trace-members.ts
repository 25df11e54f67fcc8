/**
 * Which runs belong to a trace, written so SQLite reads them through the
 * runs_trace index of migration 15 and the run id's own index. That index
 * leaves out every run whose id is its trace id (a trace's root as SDKs
 * number it, and every run sent without a parent): the run's id index
 * already finds it, and an entry it would add is one more page written at a
 * random place of the file per run, where ids are random. So "trace_id = X"
 * becomes "in the index under X, or the run whose id is X and whose trace is
 * itself"; SQLite answers that OR from both indexes.
 */

/** Runs of the trace whose id is the SQL expression `trace` (a parameter or a column), columns prefixed with `alias`. */
export function inTrace(trace: string, alias = ""): string {
  const t = `${alias}trace_id`;
  const id = `${alias}id`;
  return `(${t} = ${trace} AND ${t} <> ${id} OR ${id} = ${trace} AND ${t} = ${trace})`;
}

/** Runs of any trace in `list`, an SQL list (`(SELECT ...)`), columns prefixed with `alias`. */
export function inTraces(list: string, alias = ""): string {
  const t = `${alias}trace_id`;
  const id = `${alias}id`;
  return `(${t} IN ${list} AND ${t} <> ${id} OR ${id} IN ${list} AND ${t} = ${id})`;
}

/**
 * Runs `c` of the trace whose id is run `r`'s id, `r` being a row of runs in the same query (a trace list's root):
 * `r` itself, when it is its own trace's, is found by its rowid, which costs less than a look-up by id.
 */
export function inTraceOfRow(r: string, c: string): string {
  return `(${c}.trace_id = ${r}.id AND ${c}.trace_id <> ${c}.id OR ${c}.rowid = ${r}.rowid AND ${r}.trace_id = ${r}.id)`;
}
