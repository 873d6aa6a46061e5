/* parallel_lib.h: the ordered runner's recording harness, which its suites
 * (test_parallel_*.c) share: item functions that record what the runner did
 * and count what went wrong (struct rec), the handshakes the hooks use, the
 * threads of the process, and the checks of a run's record. */
#ifndef SP_TEST_PARALLEL_LIB_H
#define SP_TEST_PARALLEL_LIB_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fixtures.h"
#include "parallel.h"

#define MAX_ITEMS 1024
#define WAIT_S 60   /* a handshake that takes longer has failed */
#define SLOTS_MAX (SP_THREADS_MAX * SP_RUN_DEPTH)

/* What the item functions saw go wrong.  They run on the runner's
 * threads, where Check cannot be called, so they count and the test
 * looks afterwards. */
enum bad {
    BAD_RANGE,          /* a slot or item number out of range */
    BAD_CALLER,         /* thread 0's slots off the caller's thread, or
                           another thread's on it */
    BAD_WORK_TWICE,
    BAD_SLOT_BUSY,      /* a WORK into a slot whose item is not finished */
    BAD_FINISH_EARLY,   /* FINISH before the item's WORK returned */
    BAD_FINISH_SLOT,    /* FINISH with another slot than the WORK's */
    BAD_FINISH_TWICE,
    BAD_ORDER,          /* FINISH out of item order */
    BAD_OVERLAP,        /* two FINISHes at once */
    NBAD
};

struct rec;
typedef sp_status (*hook_fn)(struct rec *r, unsigned slot, size_t item);

/* One run's record.  nseq and seq are plain on purpose: the runner must
 * order the finishes, and under ThreadSanitizer a missing happens-before
 * between them is a report.  So are the fields an item's WORK leaves for
 * its FINISH, and slot_item, which a slot's WORK sets and the FINISH that
 * frees the slot clears, on whichever thread: the runner must order the
 * FINISH before the slot's next WORK.  The atomics are only counted,
 * relaxed (see bump). */
struct rec {
    /* Set before the run. */
    unsigned threads;
    size_t count;
    pthread_t caller;
    unsigned work_us;               /* WORK sleeps 0..work_us, by item */
    unsigned finish_us;             /* every fifth FINISH sleeps this */
    hook_fn work_hook, finish_hook; /* run inside WORK / FINISH */
    int path;                       /* which way a hook goes */
    sp_status work_fail[MAX_ITEMS], finish_fail[MAX_ITEMS];

    /* Written by the runner: the threads it says ran. */
    unsigned ran;

    /* Written by the item functions. */
    atomic_int calls;
    atomic_int works;               /* WORKs begun */
    atomic_int bad[NBAD];
    atomic_size_t bad_item[NBAD];   /* the first offender */
    atomic_int worked[MAX_ITEMS], finished[MAX_ITEMS];
    atomic_int in_finish;
    atomic_uint tickets;
    unsigned done_ticket[MAX_ITEMS];  /* the order WORKs returned in */
    int work_done[MAX_ITEMS];
    unsigned work_slot[MAX_ITEMS];
    pthread_t work_tid[MAX_ITEMS], finish_tid[MAX_ITEMS];
    size_t slot_item[SLOTS_MAX];    /* the slot's item + 1 until finished */
    size_t seq[MAX_ITEMS], nseq;    /* the items FINISHed, in call order */

    /* The hooks' handshakes, under hook_mu. */
    int finishing[MAX_ITEMS], met[MAX_ITEMS], began[MAX_ITEMS];
    int arrived, released, later_failed, first_failed;
    int tasks_seen, works_seen;
    pid_t fail_tid;     /* a started thread whose WORK fails, or 0 */
    int conclusive;     /* it returned before the other side went on */
};

/* bump: add 1, relaxed: the item functions' atomics must not order the
 * items themselves, or they would hide from ThreadSanitizer a runner that
 * does not.  (The join at the end orders them for the test.) */
#define bump(a) atomic_fetch_add_explicit(a, 1, memory_order_relaxed)

extern const char *const bad_what[NBAD];
extern pthread_mutex_t hook_mu;
extern pthread_cond_t hook_cv;
void pause_us(unsigned us);
int count_tasks(void);
void *idle(void *arg);
int wait_gone(pid_t tid, int ms);
void gone(pid_t tid);
sp_status exited(pid_t tid);
int base_tasks(void);
int tasks_after(int want);
struct timespec deadline(void);
void raise_flag(int *flag);
void arrive(int *n);
sp_status wait_count(const int *n, int want);
sp_status wait_flag(const int *flag);
sp_status meet(int *arrived, int want);
void note(struct rec *r, enum bad what, size_t item);
unsigned used_threads(const struct rec *r);
int in_range(struct rec *r, unsigned slot, size_t item);
sp_status rec_work(void *arg, unsigned slot, size_t item);
sp_status rec_finish(void *arg, unsigned slot, size_t item);
struct rec *start(unsigned threads, size_t count);
sp_status run(struct rec *r);
void check_clean(const struct rec *r);
unsigned check_threads(const struct rec *r);
unsigned check_ok(const struct rec *r, sp_status st);
void check_stopped(const struct rec *r, sp_status st, sp_status want,
                   size_t k, int in_finish);

#endif
