/* parallel.h: items 0..n-1 worked on by several threads at once and
 * finished one at a time, in order: the shape of a job whose output is
 * made in chunks by many threads and written as one stream.  Knows nothing
 * of pixels or files; pthreads enter scaleppm here.
 *
 * Each thread takes the next item, works on it (in parallel with the other
 * threads' items), waits until every earlier item is finished, finishes
 * its own (alone), and takes another.  So the threads meet only at the
 * finish, and only when one gets ahead of the order; nothing waits for all
 * of them until the end. */
#ifndef SP_PARALLEL_H
#define SP_PARALLEL_H

#include <stddef.h>

#include "status.h"

#define SP_THREADS_MAX 1024
#define SP_THREADS_STUDY 10  /* the Sun study's */

/* An item function: item ITEM in thread THREAD (0..threads-1, 0 the
 * caller's own); returns 0 or a status. */
typedef sp_status (*sp_item_fn)(void *arg, unsigned thread, size_t item);

/* sp_run_ordered: items 0..COUNT-1 on THREADS threads (1..SP_THREADS_MAX;
 * no more than COUNT of them: the caller's own and the rest started here
 * with 512 KiB stacks, all joined before the return).  Each item is taken by exactly one thread,
 * which calls WORK(ARG, t, item), then, once FINISH has returned for every
 * earlier item, FINISH(ARG, t, item): WORKs run at once on different
 * threads, FINISHes one at a time in item order, and everything an item's
 * FINISH did is visible to the next item's.  A thread takes items in
 * increasing order, so item i's WORK runs after the same thread's earlier
 * FINISHes.
 *
 * A non-zero status from WORK or FINISH stops the run: no later item is
 * finished, no new item is taken, and the threads return once their
 * current call does; an earlier item still in its WORK or waiting for its
 * turn is not finished either, so what was finished is a prefix of the
 * items, of any length up to the failed one.  Returns 0, SP_E_USAGE (bad THREADS), SP_E_THREAD (a
 * thread could not be started: nothing is finished), or the failed
 * status of the lowest-numbered item that failed. */
sp_status sp_run_ordered(unsigned threads, size_t count, sp_item_fn work,
                         sp_item_fn finish, void *arg);

#endif
