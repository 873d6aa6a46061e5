/* parallel.h: items 0..n-1 worked on by several threads at once and
 * finished one at a time, in order: the shape of a job whose output is
 * made in chunks by many threads and written as one stream.  Knows nothing
 * of pixels or files; pthreads enter scaleppm here.
 *
 * Each thread owns SP_RUN_DEPTH slots (the caller's buffers).  A thread
 * takes the next item, works on it into one of its free slots (in
 * parallel with the other threads' items), marks it ready, and then, if
 * no other thread is finishing items, finishes every ready item in order
 * from the first unfinished one: its own and the others'.  So a thread
 * whose item is not next in order does not wait for it to be written: it
 * goes on to its next item in its other slot, and whoever finishes the
 * item before leaves it written too.  A thread sleeps only when all its
 * slots hold items that are not yet finished, and nothing waits for all
 * of them until the end. */
#ifndef SP_PARALLEL_H
#define SP_PARALLEL_H

#include <pthread.h>
#include <stddef.h>

#include "internal.h"
#include "status.h"

#define SP_THREADS_MAX 1024

/* The slots a thread owns: one being worked into while another waits to
 * be finished. */
#define SP_RUN_DEPTH 2

/* An item function: item ITEM in slot SLOT (0..threads * SP_RUN_DEPTH - 1;
 * slot s belongs to thread s / SP_RUN_DEPTH, thread 0 the caller's own);
 * returns 0 or a status. */
typedef sp_status (*sp_item_fn)(void *arg, unsigned slot, size_t item);

/* sp_run_ordered: items 0..COUNT-1 on THREADS threads (1..SP_THREADS_MAX;
 * no more than COUNT of them: the caller's own and the rest started here
 * with 512 KiB stacks, all joined before the return).  A thread that
 * cannot be started (EAGAIN under RLIMIT_NPROC, say) is done without: the
 * threads that did start, the caller's at least, take every item, and
 * the slots of the others stay unused.  *RAN, if RAN is not NULL, gets
 * the number of threads that ran (the caller's included) once they are
 * started.
 *
 * Each item is taken by exactly one thread, which calls WORK(ARG, slot,
 * item) with a slot of its own that no unfinished item holds; FINISH(ARG,
 * slot, item) is called, on whichever thread, once FINISH has returned
 * for every earlier item.  WORKs run at once on different threads, and
 * beside a FINISH; FINISHes run one at a time in item order, and
 * everything an item's WORK and the earlier FINISHes did is visible to
 * its FINISH.  A slot's next WORK starts after the FINISH of its last item
 * has returned.
 *
 * A non-zero status from WORK or FINISH stops the run: no later item is
 * finished, no new item is taken, and the threads return once their
 * current call does; an earlier item still in its WORK or not yet
 * finished is not finished either, so what was finished is a prefix of
 * the items, of any length up to the failed one.  Returns 0, SP_E_USAGE
 * (bad THREADS), SP_E_THREAD (no memory for the run's bookkeeping:
 * nothing is called), or the failed status of the lowest-numbered item
 * that failed. */
sp_status sp_run_ordered(unsigned threads, size_t count, sp_item_fn work,
                         sp_item_fn finish, void *arg, unsigned *ran);

/* A test seam: how sp_run_ordered starts a thread.  pthread_create unless
 * a test sets another, which it puts back before the next run; swap it
 * only while no run is in progress.  Internal (internal.h): hidden from a
 * shared library's symbols, never a library user's. */
typedef int (*sp_thread_create_fn)(pthread_t *tid, const pthread_attr_t *attr,
                                   void *(*routine)(void *), void *arg);
extern SP_INTERNAL sp_thread_create_fn sp_run_thread_create;

#endif
