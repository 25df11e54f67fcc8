/**
 * Which runs belong to a trace, written for migration 7's runs_trace: that
 * index leaves out every run whose id is its trace id (a trace's root as SDKs
 * number it, and every run sent without a parent), which runs_id already
 * finds. So "trace_id = X" becomes "under X in runs_trace, or the run whose
 * id is X and whose trace is itself"; PostgreSQL reads the two arms from the
 * two indexes (a bitmap OR).
 */

/** Runs of the trace whose id is the SQL expression `trace` (a parameter or another row's column), columns prefixed with `alias`. */
export function inTrace(trace: string, alias = ""): string {
  const t = `${alias}trace_id`;
  const id = `${alias}id`;
  return `((${t} = ${trace} AND ${t} <> ${id}) OR (${id} = ${trace} AND ${t} = ${trace}))`;
}

/** Runs of any trace in `list`, a text[] parameter, columns prefixed with `alias`. */
export function inTraces(list: string, alias = ""): string {
  const t = `${alias}trace_id`;
  const id = `${alias}id`;
  return `((${t} = ANY(${list}) AND ${t} <> ${id}) OR (${id} = ANY(${list}) AND ${t} = ${id}))`;
}
