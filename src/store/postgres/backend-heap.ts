/**
 * A statement each new connection runs first, so its server process stops
 * handing memory back to the kernel after every statement.
 *
 * glibc's malloc gives the top of the heap back (brk) when more than its trim
 * threshold is free there, 128 KiB to start with; it raises that threshold
 * only once a block it mapped on its own (one past the mmap threshold) is
 * freed. An ingest statement's memory (its parameters, the unnested arrays'
 * tuple stores, the executor's state) is allocated and freed as a whole, so
 * a process whose threshold was never raised grows the heap and gives it back
 * around every statement, and pays the page faults of fresh pages each time,
 * on a knife's edge (a statement a little smaller or larger flips it). One large
 * value freed at once (a few MiB, in a block of its own) raises both
 * thresholds for the life of the process; the server then keeps that much
 * free heap at most. Harmless with any other allocator.
 */
export const HEAP_WARMUP_SQL = "SELECT length(repeat('x', 2 * 1024 * 1024)) AS warm";
