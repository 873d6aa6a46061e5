/* The ordered runner: every item worked once and finished once; each
 * WORK on the thread that owns its slot (slot s is thread s /
 * SP_RUN_DEPTH's, thread 0 the caller's) and into a slot whose last item
 * is finished; the finishes alone, in item order, each after its item's
 * WORK and with its slot, on any of the run's threads; WORKs overlapping
 * one another and the finishes; a thread going on into its other slot
 * rather than wait for an earlier item's FINISH, sleeping once all its
 * slots are full, and finishing the items other threads worked; a failure
 * stops the run with the lowest failed item's status and finishes nothing
 * after it; threads that cannot be started are done without, the
 * others taking every item; bad thread counts are refused; and every
 * thread started is gone when the call returns. */
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

/* A sanitizer's runtime dies when the address space runs out rather than
 * let pthread_create fail, so the test that caps it is left out there
 * (UNDER_SANITIZER, fixtures.h). */

#define MAX_ITEMS 1024
#define WAIT_S 10   /* a handshake that takes longer has failed */
#define SLOTS_MAX (SP_THREADS_MAX * SP_RUN_DEPTH)

/* expect: ck_assert_msg for hot loops: Check records the place of every
 * assertion that passes (a write() to its pipe in fork mode), so a loop
 * over items tests first and only calls into Check when one fails. */
#define expect(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond))                                                         \
            ck_abort_msg(__VA_ARGS__);                                       \
    } while (0)

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

static const char *const bad_what[NBAD] = {
    [BAD_RANGE] = "slot or item out of range",
    [BAD_CALLER] = "thread 0's slots are not the caller's, or another's "
                   "are",
    [BAD_WORK_TWICE] = "an item worked twice",
    [BAD_SLOT_BUSY] = "a WORK into a slot whose last item was not finished",
    [BAD_FINISH_EARLY] = "an item finished before its WORK returned",
    [BAD_FINISH_SLOT] = "an item finished with another slot than its WORK's",
    [BAD_FINISH_TWICE] = "an item finished twice",
    [BAD_ORDER] = "an item finished out of order",
    [BAD_OVERLAP] = "two FINISHes at once",
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

static pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hook_cv = PTHREAD_COND_INITIALIZER;

static void pause_us(unsigned us)
{
    struct timespec ts = {.tv_sec = us / 1000000,
                          .tv_nsec = (long)(us % 1000000) * 1000};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* count_tasks: the threads of this process (/proc/self/task). */
static int count_tasks(void)
{
    return fx_count_entries("/proc/self/task", NULL);
}

static void *idle(void *arg)
{
    *(pid_t *)arg = gettid();
    return NULL;
}

/* wait_gone: wait up to MS milliseconds for task TID to leave
 * /proc/self/task; returns whether it did. */
static int wait_gone(pid_t tid, int ms)
{
    char path[64];
    int i = 0;

    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    while (fx_file_exists(path) && i++ < ms)
        pause_us(1000);
    return !fx_file_exists(path);
}

/* gone: wait up to a second for task TID to go.  pthread_join returns
 * when the kernel clears the thread's id, a moment before it drops the
 * task. */
static void gone(pid_t tid)
{
    (void)wait_gone(tid, 1000);
}

/* exited: task TID is gone, or ETIMEDOUT after WAIT_S: a runner's thread
 * that returned from the run.  No item function is called after a
 * failure is recorded, so this is the only sign that it was. */
static sp_status exited(pid_t tid)
{
    return wait_gone(tid, WAIT_S * 1000) ? SP_OK : ETIMEDOUT;
}

/* base_tasks: the threads of this process before a run.  A thread is
 * started and joined first: ThreadSanitizer starts a thread of its own
 * with the process's first, and keeps it. */
static int base_tasks(void)
{
    pthread_t t;
    pid_t tid = 0;

    ck_assert_int_eq(pthread_create(&t, NULL, idle, &tid), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    gone(tid);
    return count_tasks();
}

/* tasks_after: the threads of this process after a run, given WANT
 * before it.  A count above WANT is read again for up to a second, for
 * the joined threads the kernel has not yet dropped (see gone); a thread
 * left running stays and is counted. */
static int tasks_after(int want)
{
    int n = count_tasks();

    for (int i = 0; i < 1000 && n > want; i++) {
        pause_us(1000);
        n = count_tasks();
    }
    return n;
}

static struct timespec deadline(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += WAIT_S;
    return ts;
}

static void raise_flag(int *flag)
{
    pthread_mutex_lock(&hook_mu);
    *flag = 1;
    pthread_cond_broadcast(&hook_cv);
    pthread_mutex_unlock(&hook_mu);
}

/* arrive: count one in at *N. */
static void arrive(int *n)
{
    pthread_mutex_lock(&hook_mu);
    ++*n;
    pthread_cond_broadcast(&hook_cv);
    pthread_mutex_unlock(&hook_mu);
}

/* wait_count: until *N reaches WANT, or ETIMEDOUT after WAIT_S: a runner
 * that never lets the other side run fails the test rather than hang. */
static sp_status wait_count(const int *n, int want)
{
    struct timespec end = deadline();
    int rc = 0, got;

    pthread_mutex_lock(&hook_mu);
    while (*n < want && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&hook_cv, &hook_mu, &end);
    got = *n;
    pthread_mutex_unlock(&hook_mu);
    return got >= want ? SP_OK : ETIMEDOUT;
}

/* wait_flag: until FLAG is raised, or ETIMEDOUT. */
static sp_status wait_flag(const int *flag)
{
    return wait_count(flag, 1);
}

/* meet: count in at *ARRIVED and wait until WANT have, or ETIMEDOUT.
 * Only the last to come wakes the others: with a thousand threads a
 * broadcast on every arrival would be a million wakeups. */
static sp_status meet(int *arrived, int want)
{
    struct timespec end = deadline();
    int rc = 0, all;

    pthread_mutex_lock(&hook_mu);
    if (++*arrived == want)
        pthread_cond_broadcast(&hook_cv);
    while (*arrived < want && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&hook_cv, &hook_mu, &end);
    all = *arrived >= want;
    pthread_mutex_unlock(&hook_mu);
    return all ? SP_OK : ETIMEDOUT;
}

static void note(struct rec *r, enum bad what, size_t item)
{
    if (bump(&r->bad[what]) == 0)
        atomic_store_explicit(&r->bad_item[what], item, memory_order_relaxed);
}

/* used_threads: the threads the run needs: one an item, at least one. */
static unsigned used_threads(const struct rec *r)
{
    if (r->count == 0)
        return 1;
    return r->count < r->threads ? (unsigned)r->count : r->threads;
}

/* in_range: whether SLOT is one of the used threads' and ITEM one of the
 * run's, so both can index the record. */
static int in_range(struct rec *r, unsigned slot, size_t item)
{
    if (slot < used_threads(r) * SP_RUN_DEPTH && slot < SLOTS_MAX &&
        item < r->count && item < MAX_ITEMS)
        return 1;
    note(r, BAD_RANGE, item);
    return 0;
}

static sp_status rec_work(void *arg, unsigned slot, size_t item)
{
    struct rec *r = arg;
    sp_status st = SP_OK;

    bump(&r->calls);
    if (!in_range(r, slot, item))
        return SP_OK;
    bump(&r->works);
    if (bump(&r->worked[item]) != 0)
        note(r, BAD_WORK_TWICE, item);
    if (r->slot_item[slot] != 0)
        note(r, BAD_SLOT_BUSY, item);
    r->slot_item[slot] = item + 1;
    if ((slot / SP_RUN_DEPTH == 0) != !!pthread_equal(pthread_self(),
                                                      r->caller))
        note(r, BAD_CALLER, item);
    r->work_slot[item] = slot;
    r->work_tid[item] = pthread_self();
    /* Uneven, item-keyed delays (at 200 us, consecutive items differ by
     * 80 us modulo 201), so that later items often get ahead. */
    if (r->work_us > 0)
        pause_us((unsigned)(item * 7919 % (r->work_us + 1)));
    if (r->work_hook != NULL)
        st = r->work_hook(r, slot, item);
    r->done_ticket[item] = bump(&r->tickets);
    r->work_done[item] = 1;
    return st != SP_OK ? st : r->work_fail[item];
}

static sp_status rec_finish(void *arg, unsigned slot, size_t item)
{
    struct rec *r = arg;
    sp_status st = SP_OK;
    int mine;

    bump(&r->calls);
    if (!in_range(r, slot, item))
        return SP_OK;
    if (bump(&r->in_finish) != 0)
        note(r, BAD_OVERLAP, item);
    if (bump(&r->finished[item]) != 0)
        note(r, BAD_FINISH_TWICE, item);
    if (!r->work_done[item])
        note(r, BAD_FINISH_EARLY, item);
    mine = r->work_slot[item] == slot && r->slot_item[slot] == item + 1;
    if (!mine)
        note(r, BAD_FINISH_SLOT, item);
    if (r->nseq != item)
        note(r, BAD_ORDER, item);
    if (r->nseq < MAX_ITEMS)
        r->seq[r->nseq++] = item;
    r->finish_tid[item] = pthread_self();
    /* A slow FINISH now and then holds the door open for a second one. */
    if (r->finish_us > 0 && item % 5 == 0)
        pause_us(r->finish_us);
    if (r->finish_hook != NULL)
        st = r->finish_hook(r, slot, item);
    /* Last: the slot is free for its next WORK once this returns. */
    if (mine)
        r->slot_item[slot] = 0;
    atomic_fetch_sub_explicit(&r->in_finish, 1, memory_order_relaxed);
    return st != SP_OK ? st : r->finish_fail[item];
}

/* start: a fresh record for COUNT items on THREADS threads. */
static struct rec *start(unsigned threads, size_t count)
{
    static struct rec r;

    ck_assert_uint_le(count, MAX_ITEMS);
    memset(&r, 0, sizeof r);
    r.threads = threads;
    r.count = count;
    r.caller = pthread_self();
    return &r;
}

static sp_status run(struct rec *r)
{
    return sp_run_ordered(r->threads, r->count, rec_work, rec_finish, r,
                          &r->ran);
}

/* check_clean: nothing went wrong; if something did, all of it is named,
 * since one fault often brings others (a FINISH out of order is one with
 * the wrong slot too), and the first in the list need not be the cause. */
static void check_clean(const struct rec *r)
{
    char what[1024] = "";
    size_t len = 0;

    for (int k = 0; k < NBAD; k++) {
        int times = atomic_load(&r->bad[k]);

        if (times == 0)
            continue;
        len += (size_t)snprintf(what + len, sizeof what - len,
                                "%s%s (%d times, first item %zu)",
                                len > 0 ? "; " : "", bad_what[k], times,
                                atomic_load(&r->bad_item[k]));
        if (len >= sizeof what)
            len = sizeof what - 1;
    }
    expect(len == 0, "%u threads, %zu items: %s", r->threads, r->count,
           what);
}

/* check_threads: the slots of each thread number WORKed on one thread,
 * thread 0's on the caller's, different numbers on different threads,
 * and every FINISH on one of those threads; returns how many thread
 * numbers WORKed. */
static unsigned check_threads(const struct rec *r)
{
    static pthread_t tid_of[SP_THREADS_MAX];
    static unsigned list[SP_THREADS_MAX];
    static char seen[SP_THREADS_MAX];
    unsigned n = 0;

    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < r->count; i++) {
        unsigned t = r->work_slot[i] / SP_RUN_DEPTH;

        if (atomic_load(&r->worked[i]) == 0)
            continue;
        if (!seen[t]) {
            seen[t] = 1;
            tid_of[t] = r->work_tid[i];
            list[n++] = t;
        }
        expect(pthread_equal(tid_of[t], r->work_tid[i]), "%u threads, %zu "
               "items: thread %u is two threads", r->threads, r->count, t);
    }
    expect(!seen[0] || pthread_equal(tid_of[0], r->caller),
           "%u threads, %zu items: thread 0 is not the caller's",
           r->threads, r->count);
    for (unsigned a = 0; a < n; a++)
        for (unsigned b = 0; b < a; b++)
            expect(!pthread_equal(tid_of[list[a]], tid_of[list[b]]),
                   "%u threads, %zu items: threads %u and %u are one",
                   r->threads, r->count, list[a], list[b]);
    for (size_t i = 0; i < r->count; i++) {
        unsigned a = 0;

        if (atomic_load(&r->finished[i]) == 0)
            continue;
        while (a < n && !pthread_equal(tid_of[list[a]], r->finish_tid[i]))
            a++;
        expect(a < n, "%u threads, %zu items: item %zu finished on none "
               "of the threads that worked", r->threads, r->count, i);
    }
    return n;
}

/* check_ok: the run returned ST, success, with every item worked and
 * finished once, in order, and nothing amiss; returns how many thread
 * numbers WORKed. */
static unsigned check_ok(const struct rec *r, sp_status st)
{
    expect(st == SP_OK, "%u threads, %zu items: %s", r->threads, r->count,
           sp_strerror(st));
    check_clean(r);
    expect(r->nseq == r->count, "%u threads, %zu items: %zu finished",
           r->threads, r->count, r->nseq);
    for (size_t i = 0; i < r->count; i++)
        expect(atomic_load(&r->worked[i]) == 1 &&
               atomic_load(&r->finished[i]) == 1 && r->seq[i] == i,
               "%u threads, %zu items: item %zu worked %d, finished %d "
               "times, finish %zu was item %zu", r->threads, r->count, i,
               atomic_load(&r->worked[i]), atomic_load(&r->finished[i]),
               i, r->seq[i]);
    return check_threads(r);
}

/* check_stopped: the run returned ST, and the lowest item that failed is
 * K, in its FINISH if IN_FINISH else in its WORK, with status WANT.  No
 * later item is finished (nor K itself, when its WORK failed), the
 * finishes that happened are 0, 1, ... in order, the items worked are
 * 0..M-1 for some M > K, and each slot held at most one item never
 * finished, so M <= K + slots. */
static void check_stopped(const struct rec *r, sp_status st, sp_status want,
                          size_t k, int in_finish)
{
    size_t limit = in_finish ? k + 1 : k, taken = 0;
    unsigned used = used_threads(r);

    expect(st == want, "%u threads, %zu items, item %zu failing: %s, not "
           "%s", r->threads, r->count, k, sp_strerror(st),
           sp_strerror(want));
    check_clean(r);
    expect(r->nseq <= limit, "%u threads, %zu items, item %zu failing: %zu "
           "finished", r->threads, r->count, k, r->nseq);
    /* Item K's FINISH runs only after every earlier item's; one thread,
     * with nobody else to finish, finishes each item it worked before it
     * takes the next. */
    if (in_finish || used == 1)
        expect(r->nseq == limit, "%u threads, %zu items, item %zu failing: "
               "%zu finished, not %zu", r->threads, r->count, k, r->nseq,
               limit);
    for (size_t i = 0; i < r->count; i++)
        expect(atomic_load(&r->finished[i]) == (i < r->nseq) &&
               (i >= r->nseq || r->seq[i] == i), "%u threads, %zu items, "
               "item %zu failing: item %zu finished %d times (%zu "
               "finished)", r->threads, r->count, k, i,
               atomic_load(&r->finished[i]), r->nseq);
    while (taken < r->count && atomic_load(&r->worked[taken]) == 1)
        taken++;
    for (size_t i = taken; i < r->count; i++)
        expect(atomic_load(&r->worked[i]) == 0, "%u threads, %zu items, "
               "item %zu failing: item %zu worked, %zu not",
               r->threads, r->count, k, i, taken);
    expect(taken > k && taken <= k + used * SP_RUN_DEPTH &&
           (used > 1 || taken == k + 1), "%u threads, %zu items, item %zu "
           "failing: items 0..%zu taken", r->threads, r->count, k,
           taken - 1);
    check_threads(r);
}

/* ---- everything once, in order ---- */

/* Threads 1..17 and SP_THREADS_MAX (_i) against 0..40 items and a few
 * larger counts, with quick items: each worked and finished once, the
 * finishes in order, and no thread outlives its run. */
START_TEST(test_each_item_once)
{
    static const size_t more[] = {63, 64, 65, 1000};
    unsigned threads = _i < 17 ? (unsigned)_i + 1 : SP_THREADS_MAX;
    int tasks = base_tasks();

    for (size_t n = 0; n < 41 + sizeof more / sizeof more[0]; n++) {
        struct rec *r = start(threads, n < 41 ? n : more[n - 41]);
        int after;

        check_ok(r, run(r));
        after = tasks_after(tasks);
        expect(after == tasks, "%u threads, %zu items: %d threads after, "
               "%d before", threads, r->count, after, tasks);
    }
}
END_TEST

/* Slow, uneven WORKs (0..200 us) and some slow FINISHes on 2..17 threads:
 * later items get ahead of earlier ones, yet the finishes still come one
 * at a time, 0, 1, 2, ..., each with its item's slot; and more than one
 * thread did the work. */
START_TEST(test_order_under_jitter)
{
    static const unsigned counts[] = {2, 3, 4, 5, 8, 17};
    unsigned threads = counts[_i];
    struct rec *r = start(threads, 300);
    int ahead = 0;

    r->work_us = 200;
    r->finish_us = 50;
    expect(check_ok(r, run(r)) > 1, "%u threads: one thread did it all",
           threads);
    /* Otherwise the test proved nothing about the ordering. */
    for (size_t i = 0; i + 1 < r->count && !ahead; i++)
        for (size_t j = i + 1; j < r->count && j < i + threads; j++)
            ahead |= r->done_ticket[j] < r->done_ticket[i];
    ck_assert_msg(ahead, "%u threads: no WORK ever got ahead", threads);
}
END_TEST

/* ---- at the same time ---- */

/* Every WORK waits for all the others to be in progress, and thread 0
 * counts the process's threads meanwhile: THREADS items on THREADS
 * threads can only get past that if all of them run at once, each on a
 * thread of its own (a thread is in one WORK at a time, whatever its
 * slots), the caller's among them, THREADS - 1 started. */
static sp_status meet_work(struct rec *r, unsigned slot, size_t item)
{
    sp_status st = meet(&r->arrived, (int)r->count);

    (void)item;
    if (st != SP_OK)
        return st;
    if (slot / SP_RUN_DEPTH != 0)
        return wait_flag(&r->released);
    r->tasks_seen = count_tasks();
    raise_flag(&r->released);
    return SP_OK;
}

START_TEST(test_works_at_once)
{
    static const unsigned more[] = {32, 64, SP_THREADS_MAX};
    unsigned threads = _i < 16 ? (unsigned)_i + 2 : more[_i - 16];
    int tasks = base_tasks();
    struct rec *r = start(threads, threads);
    sp_status st;

    r->work_hook = meet_work;
    st = run(r);
    expect(st != ETIMEDOUT, "%u threads: the WORKs did not all run at once",
           threads);
    ck_assert_uint_eq(check_ok(r, st), threads);
    ck_assert_int_eq(r->tasks_seen, tasks + (int)threads - 1);
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

/* The CPUs the caller may run on, and how many WORKs ran on a thread
 * that may not run on all of them. */
static cpu_set_t caller_cpus;
static atomic_int pinned_works;

static sp_status cpus_work(struct rec *r, unsigned slot, size_t item)
{
    cpu_set_t mine;

    if (sched_getaffinity(0, sizeof mine, &mine) != 0 ||
        !CPU_EQUAL(&mine, &caller_cpus))
        atomic_fetch_add(&pinned_works, 1);
    return meet_work(r, slot, item);
}

/* A worker is started on a CPU of its own, but not kept there: each WORK
 * runs on a thread free to run on every CPU the caller may.  The WORKs
 * meet, as in test_works_at_once, so every thread runs one and none is
 * left unchecked however the scheduler deals them out. */
START_TEST(test_threads_not_pinned)
{
    unsigned threads = (unsigned)_i + 2;
    struct rec *r = start(threads, threads);
    int pinned;

    ck_assert_int_eq(sched_getaffinity(0, sizeof caller_cpus, &caller_cpus),
                     0);
    atomic_store(&pinned_works, 0);
    r->work_hook = cpus_work;
    ck_assert_uint_eq(check_ok(r, run(r)), threads);
    pinned = atomic_load(&pinned_works);
    ck_assert_msg(pinned == 0, "%d of %u WORKs ran on a pinned thread",
                  pinned, threads);
}
END_TEST

/* What each worker was started with (placing_create, the thread seam):
 * the CPUs its attributes allow, and the CPU its creator was on. */
static cpu_set_t placed_on[SP_THREADS_MAX];
static int creator_cpu[SP_THREADS_MAX];
static unsigned creates;

static int placing_create(pthread_t *tid, const pthread_attr_t *attr,
                          void *(*routine)(void *), void *arg)
{
    if (creates < SP_THREADS_MAX) {
        if (pthread_attr_getaffinity_np(attr, sizeof placed_on[0],
                                        &placed_on[creates]) != 0)
            CPU_ZERO(&placed_on[creates]);
        creator_cpu[creates] = sched_getcpu();
    }
    creates++;
    return pthread_create(tid, attr, routine, arg);
}

/* A worker starts pinned to one CPU of those the caller may run on, and
 * while there are CPUs to spare not to the one its creator is on, so that
 * it does not wait there for the creator to block (place() in
 * parallel.c).  _i picks 2 threads, one a CPU, or twice as many as CPUs
 * and one (the CPUs dealt round).  A creator that moves to another CPU
 * between placing a worker and starting it could meet its worker: a run
 * where that happens is tried again, up to 5 times. */
START_TEST(test_threads_placed)
{
    cpu_set_t allowed;
    unsigned n, threads, beside = 0;

    ck_assert_int_eq(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    n = (unsigned)CPU_COUNT(&allowed);
    if (n < 2) {
        fprintf(stderr, "test_threads_placed: one CPU: nothing to place\n");
        return;
    }
    threads = _i == 0 ? 2 : _i == 1 ? n : 2 * n + 1;
    if (threads > SP_THREADS_MAX)
        threads = SP_THREADS_MAX;
    sp_run_thread_create = placing_create;
    for (int attempt = 0; attempt < 5; attempt++) {
        struct rec *r = start(threads, threads);

        creates = 0;
        (void)check_ok(r, run(r));
        ck_assert_uint_eq(creates, threads - 1);
        beside = 0;
        for (unsigned t = 0; t < creates; t++) {
            cpu_set_t both;

            CPU_AND(&both, &placed_on[t], &allowed);
            ck_assert_msg(CPU_COUNT(&placed_on[t]) == 1 &&
                          CPU_COUNT(&both) == 1,
                          "%u threads: worker %u may run on %d CPUs, %d of "
                          "them allowed, not one", threads, t + 1,
                          CPU_COUNT(&placed_on[t]), CPU_COUNT(&both));
            beside += creator_cpu[t] >= 0 && t + 1 < n &&
                      CPU_ISSET((unsigned)creator_cpu[t], &placed_on[t]);
        }
        if (beside == 0)
            break;
    }
    sp_run_thread_create = pthread_create;
    ck_assert_msg(beside == 0, "%u threads: %u workers placed on their "
                  "creator's CPU", threads, beside);
}
END_TEST

/* Item 2m's FINISH and item 2m+1's WORK wait for each other, so each
 * handshake proves a WORK in progress during a FINISH.  It cannot
 * deadlock a correct runner on 2+ threads: while item 2m finishes, every
 * earlier item is finished, so item 2m+1 is either in its WORK or not yet
 * taken, and then no slot but item 2m's is full, so a thread other than
 * the one in the FINISH is free to take it. */
static sp_status overlap_work(struct rec *r, unsigned slot, size_t item)
{
    sp_status st;

    (void)slot;
    if (item % 2 == 0)
        return SP_OK;
    st = wait_flag(&r->finishing[item - 1]);
    if (st == SP_OK)
        raise_flag(&r->met[item]);
    return st;
}

static sp_status overlap_finish(struct rec *r, unsigned slot, size_t item)
{
    (void)slot;
    if (item % 2 != 0 || item + 1 == r->count)
        return SP_OK;
    raise_flag(&r->finishing[item]);
    return wait_flag(&r->met[item + 1]);
}

START_TEST(test_work_during_finish)
{
    static const unsigned counts[] = {2, 3, 4, 8, 17};

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        struct rec *r = start(counts[c], 41);
        sp_status st;

        r->work_hook = overlap_work;
        r->finish_hook = overlap_finish;
        r->work_us = 20;
        st = run(r);
        expect(st != ETIMEDOUT, "%u threads: no WORK ran during a FINISH",
               counts[c]);
        check_ok(r, st);
    }
}
END_TEST

/* ---- working ahead, finishing for others ---- */

/* Item 0's WORK holds on until the other items WORKed meanwhile number
 * SP_RUN_DEPTH for each other thread.  Nothing can be finished before
 * item 0, so a thread that waited for its item's FINISH would stop at
 * one; one that goes on fills its every slot, and then must sleep: it is
 * given time to take one more, and the WORKs begun are counted. */
static sp_status ahead_work(struct rec *r, unsigned slot, size_t item)
{
    int others = (int)(used_threads(r) - 1) * SP_RUN_DEPTH;
    sp_status st;

    (void)slot;
    if (item != 0) {
        arrive(&r->arrived);
        return SP_OK;
    }
    st = wait_count(&r->arrived, others);
    if (st != SP_OK)
        return st;
    pause_us(20000);
    r->works_seen = atomic_load_explicit(&r->works, memory_order_relaxed);
    return SP_OK;
}

START_TEST(test_work_ahead)
{
    static const unsigned counts[] = {2, 3, 4, 8, 17};
    static char full[SLOTS_MAX];
    unsigned threads = counts[_i];
    unsigned others = (threads - 1) * SP_RUN_DEPTH;
    struct rec *r = start(threads, others + 1 + 7);
    unsigned t0;
    sp_status st;

    r->work_hook = ahead_work;
    st = run(r);
    expect(st != ETIMEDOUT, "%u threads: %u items not worked while item 0 "
           "was", threads, others);
    check_ok(r, st);
    ck_assert_msg(r->works_seen == (int)others + 1, "%u threads: %d WORKs "
                  "begun before item 0's returned, not %u", threads,
                  r->works_seen, others + 1);
    /* Each of the others in a slot of its own, none item 0's thread's:
     * every other thread's every slot. */
    memset(full, 0, sizeof full);
    t0 = r->work_slot[0] / SP_RUN_DEPTH;
    for (size_t i = 1; i <= others; i++) {
        unsigned s = r->work_slot[i];

        expect(s / SP_RUN_DEPTH != t0 && !full[s], "%u threads: item %zu "
               "in slot %u while item 0 was in slot %u", threads, i, s,
               r->work_slot[0]);
        full[s] = 1;
    }
}
END_TEST

/* On 2 threads, item 0's WORK (path 0) or FINISH (path 1) holds on until
 * item 2's WORK has begun, and item 2's WORK until item 1's FINISH has.
 * Item 0's thread is busy with it meanwhile, so the other thread takes
 * items 1 and 2 into its two slots, and item 1 is ready before item 0's
 * thread is done with item 0: that thread, finishing, finishes item 1 as
 * well, while the thread that worked item 1 is still in item 2's WORK.  A
 * runner where only an item's own thread finishes it never gets past
 * that wait. */
static sp_status elsewhere_work(struct rec *r, unsigned slot, size_t item)
{
    (void)slot;
    if (item == 0 && r->path == 0)
        return wait_flag(&r->began[2]);
    if (item != 2)
        return SP_OK;
    raise_flag(&r->began[2]);
    return wait_flag(&r->finishing[1]);
}

static sp_status elsewhere_finish(struct rec *r, unsigned slot, size_t item)
{
    (void)slot;
    if (item == 0 && r->path == 1)
        return wait_flag(&r->began[2]);
    if (item == 1)
        raise_flag(&r->finishing[1]);
    return SP_OK;
}

START_TEST(test_finish_elsewhere)
{
    static const size_t counts[] = {3, 4, 9, 40};

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        struct rec *r = start(2, counts[c]);
        sp_status st;

        r->path = _i;
        r->work_hook = elsewhere_work;
        r->finish_hook = elsewhere_finish;
        r->work_us = c == 3 ? 20 : 0;
        st = run(r);
        expect(st != ETIMEDOUT, "%zu items, path %d: item 1 not finished "
               "while its thread was in item 2's WORK", r->count, _i);
        ck_assert_uint_eq(check_ok(r, st), 2);
        expect(pthread_equal(r->work_tid[1], r->work_tid[2]) &&
               r->work_slot[1] != r->work_slot[2] &&
               !pthread_equal(r->work_tid[0], r->work_tid[1]),
               "%zu items, path %d: items 0, 1, 2 in slots %u, %u, %u",
               r->count, _i, r->work_slot[0], r->work_slot[1],
               r->work_slot[2]);
        expect(pthread_equal(r->finish_tid[0], r->work_tid[0]) &&
               pthread_equal(r->finish_tid[1], r->work_tid[0]),
               "%zu items, path %d: items 0 and 1 not finished by item 0's "
               "thread", r->count, _i);
    }
}
END_TEST

/* ---- failures ---- */

/* WORK (_i 0) or FINISH (_i 1) of item K fails: that status, nothing from
 * K on finished; a FINISH failing, everything before K finished. */
START_TEST(test_item_fails)
{
    static const unsigned counts[] = {1, 2, 3, 4, 8, 17};
    static const size_t bad[] = {0, 1, 7, 30, 49};
    static const sp_status codes[2][2] = {{EIO, SP_E_TRUNCATED},
                                          {ENOSPC, SP_E_ENCODE}};
    int tasks = base_tasks();

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
            for (size_t e = 0; e < 2; e++) {
                struct rec *r = start(counts[c], 50);

                r->work_us = 30;
                if (_i == 0)
                    r->work_fail[bad[b]] = codes[_i][e];
                else
                    r->finish_fail[bad[b]] = codes[_i][e];
                check_stopped(r, run(r), codes[_i][e], bad[b], _i);
            }
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

/* Two failures for certain: item 3 waits, in its WORK or its FINISH,
 * until item 4's WORK has failed, then fails itself (or, the third way,
 * its WORK succeeds).  Nothing blocks item 4 meanwhile: everything before
 * 3 can finish, so another thread's slot comes free to take 4 if none
 * has.  The run returns item 3's status, the lower item's, though it came
 * second. */
enum { FIRST = 3, SECOND = 4 };

static sp_status second_fails(struct rec *r, unsigned slot, size_t item)
{
    (void)slot;
    if (item == SECOND)
        raise_flag(&r->later_failed);
    return item == FIRST ? wait_flag(&r->later_failed) : SP_OK;
}

/* Item 3's FINISH is called only if nothing failed before its turn, so
 * item 4's WORK waits for that FINISH to begin before it fails. */
static sp_status second_fails_in_finish(struct rec *r, unsigned slot,
                                        size_t item)
{
    sp_status st;

    (void)slot;
    if (item != SECOND)
        return SP_OK;
    st = wait_flag(&r->finishing[FIRST]);
    raise_flag(&r->later_failed);
    return st;
}

static sp_status first_fails_in_finish(struct rec *r, unsigned slot,
                                       size_t item)
{
    (void)slot;
    if (item != FIRST)
        return SP_OK;
    raise_flag(&r->finishing[FIRST]);
    return wait_flag(&r->later_failed);
}

/* Item 1's WORK fails once item 2's has begun on another thread, and
 * item 2's only once item 1's thread has returned from the run, its
 * failure recorded.  Item 0's WORK waits for item 1's to begin, so that
 * item 1 is on another thread than item 0, which the caller's nearly
 * always takes: only a started thread is seen to return, and a run where
 * item 1 fell to the caller's proves nothing and is made again. */
static sp_status first_fails_first(struct rec *r, unsigned slot,
                                   size_t item)
{
    sp_status st;

    (void)slot;
    switch (item) {
    case 0:
        return wait_flag(&r->began[1]);
    case 1:
        raise_flag(&r->began[1]);
        st = wait_flag(&r->began[2]);
        if (!pthread_equal(pthread_self(), r->caller))
            r->fail_tid = gettid();
        raise_flag(&r->first_failed);
        return st;
    case 2:
        raise_flag(&r->began[2]);
        st = wait_flag(&r->first_failed);
        if (st == SP_OK && r->fail_tid != 0) {
            st = exited(r->fail_tid);
            r->conclusive = st == SP_OK;
        }
        return st;
    }
    return SP_OK;
}

START_TEST(test_lowest_failure_wins)
{
    int tasks = base_tasks();

    for (unsigned threads = 2; threads <= 9; threads++) {
        struct rec *r = start(threads, 20);

        /* In the WORKs: item 3's status. */
        r->work_hook = second_fails;
        r->work_fail[FIRST] = ENOMEM;
        r->work_fail[SECOND] = EIO;
        check_stopped(r, run(r), ENOMEM, FIRST, 0);

        /* Item 3's FINISH fails while 4's WORK does. */
        r = start(threads, 20);
        r->work_hook = second_fails_in_finish;
        r->finish_hook = first_fails_in_finish;
        r->finish_fail[FIRST] = SP_E_CHANGED;
        r->work_fail[SECOND] = EIO;
        check_stopped(r, run(r), SP_E_CHANGED, FIRST, 1);

        /* Item 3's WORK succeeds after 4's failed: 4's status, and
         * nothing from 4 on finished (3 may or may not be). */
        r = start(threads, 20);
        r->work_hook = second_fails;
        r->work_fail[SECOND] = EIO;
        check_stopped(r, run(r), EIO, SECOND, 0);

        /* Item 2's WORK fails after 1's failure was recorded: still 1's
         * status (a runner that kept the last failure's would say 2's). */
        for (int tries = 0; tries == 0 || (!r->conclusive && tries < 100);
             tries++) {
            r = start(threads, 20);
            r->work_hook = first_fails_first;
            r->work_fail[1] = ENOMEM;
            r->work_fail[2] = EIO;
            check_stopped(r, run(r), ENOMEM, 1, 0);
        }
        ck_assert_msg(r->conclusive, "%u threads: item 1 failed on the "
                      "caller's thread 100 times", threads);
    }
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

/* Every WORK fails, with different statuses: item 0 is always taken and
 * worked, so its status is the one. */
START_TEST(test_all_fail)
{
    for (unsigned threads = 1; threads <= 17; threads++) {
        struct rec *r = start(threads, 40);

        r->work_us = 50;
        for (size_t i = 0; i < r->count; i++)
            r->work_fail[i] = i == 0 ? SP_E_CHANGED : i % 2 ? EIO : ENOMEM;
        check_stopped(r, run(r), SP_E_CHANGED, 0, 0);
    }
}
END_TEST

/* After a failure nothing more is finished, not even an earlier item
 * that is ready.  On 2 threads, item 0's FINISH holds on while the other
 * thread, free to take items 1 and 2, works them, item 2 failing once
 * that FINISH has begun; the FINISH returns only when the failing thread
 * has returned from the run, so with the failure recorded, and item 1,
 * worked and waiting, must stay unfinished.  Only a started thread is
 * seen to return: a run where the caller's failed is made again. */
static sp_status stop_work(struct rec *r, unsigned slot, size_t item)
{
    sp_status st;

    (void)slot;
    if (item != 2)
        return SP_OK;
    st = wait_flag(&r->finishing[0]);
    if (!pthread_equal(pthread_self(), r->caller))
        r->fail_tid = gettid();
    raise_flag(&r->began[2]);
    return st;
}

static sp_status stop_finish(struct rec *r, unsigned slot, size_t item)
{
    sp_status st;

    (void)slot;
    if (item != 0)
        return SP_OK;
    raise_flag(&r->finishing[0]);
    st = wait_flag(&r->began[2]);
    if (st == SP_OK && r->fail_tid != 0) {
        st = exited(r->fail_tid);
        r->conclusive = st == SP_OK;
    }
    return st;
}

START_TEST(test_no_finish_after_failure)
{
    struct rec *r = NULL;

    for (int tries = 0; tries == 0 || (!r->conclusive && tries < 100);
         tries++) {
        sp_status st;

        r = start(2, 6);
        r->work_hook = stop_work;
        r->finish_hook = stop_finish;
        r->work_fail[2] = EIO;
        st = run(r);
        expect(st != ETIMEDOUT, "the failing thread did not return");
        check_stopped(r, st, EIO, 2, 0);
    }
    ck_assert_msg(r->conclusive, "item 2 failed on the caller's thread "
                  "100 times");
    ck_assert_msg(r->nseq == 1 && atomic_load(&r->worked[1]) == 1,
                  "%zu finished after item 2 failed", r->nseq);
}
END_TEST

/* creates_left: how many threads fake_create starts before it fails
 * with EAGAIN, as pthread_create does under RLIMIT_NPROC. */
static int creates_left;

static int fake_create(pthread_t *tid, const pthread_attr_t *attr,
                       void *(*routine)(void *), void *arg)
{
    if (creates_left == 0)
        return EAGAIN;
    creates_left--;
    return pthread_create(tid, attr, routine, arg);
}

/* check_ran: the run said it ran on WANT threads (or, WANT 0, fewer than
 * asked for), and only those threads' slots were used. */
static void check_ran(const struct rec *r, unsigned want)
{
    expect(want ? r->ran == want : r->ran >= 1 && r->ran < r->threads,
           "%u threads asked, %u started: %u ran", r->threads, want,
           r->ran);
    for (size_t i = 0; i < r->count; i++)
        expect(!atomic_load(&r->worked[i]) ||
               r->work_slot[i] / SP_RUN_DEPTH < r->ran,
               "%u threads, %u ran: item %zu in slot %u", r->threads,
               r->ran, i, r->work_slot[i]);
}

/* Threads that cannot be started: the run goes on with those that did,
 * the caller's at least (_i more: 0, 1, 2, 5, then none fails), every
 * item worked and finished once, in order, and it says how many ran;
 * with an item failing, the run stops as it should. */
START_TEST(test_fewer_threads)
{
    static const int more[] = {0, 1, 2, 5, 7};
    int tasks = base_tasks();
    struct rec *r;

    creates_left = more[_i];
    sp_run_thread_create = fake_create;
    r = start(8, 300);
    r->work_us = 50;
    ck_assert_uint_le(check_ok(r, run(r)), (unsigned)more[_i] + 1);
    check_ran(r, (unsigned)more[_i] + 1);
    ck_assert_int_eq(tasks_after(tasks), tasks);

    creates_left = more[_i];
    r = start(8, 300);
    r->work_fail[100] = EIO;
    check_stopped(r, run(r), EIO, 100, 0);
    check_ran(r, (unsigned)more[_i] + 1);
    sp_run_thread_create = pthread_create;
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

#ifndef UNDER_SANITIZER
/* Threads that cannot be started for want of address space for their
 * stacks (capped just above what the process maps): the run goes on
 * with those that did, every item done, and the threads that started
 * are joined. */
START_TEST(test_thread_start_fails)
{
    int tasks = base_tasks();
    struct rec *r = start(SP_THREADS_MAX, MAX_ITEMS);

    fx_limit_as((size_t)8 << 20);
    check_ok(r, run(r));
    check_ran(r, 0);
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST
#endif

/* ---- usage ---- */

/* Thread counts out of range: SP_E_USAGE, nothing called, no thread. */
START_TEST(test_bad_threads)
{
    static const unsigned bad[] = {0, SP_THREADS_MAX + 1, 100000,
                                   (unsigned)-1};
    static const size_t counts[] = {0, 1, 10};
    int tasks = base_tasks();

    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            struct rec *r = start(bad[b], counts[c]);

            ck_assert_int_eq(run(r), SP_E_USAGE);
            ck_assert_int_eq(atomic_load(&r->calls), 0);
            ck_assert_int_eq(tasks_after(tasks), tasks);
        }
}
END_TEST

/* No items: success, nothing called, whatever the threads. */
START_TEST(test_no_items)
{
    static const unsigned counts[] = {1, 2, 17, SP_THREADS_MAX};
    int tasks = base_tasks();

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        struct rec *r = start(counts[c], 0);

        ck_assert_int_eq(run(r), SP_OK);
        ck_assert_int_eq(atomic_load(&r->calls), 0);
        ck_assert_int_eq(tasks_after(tasks), tasks);
    }
}
END_TEST

/* More threads than items: fine, and only as many threads are used as
 * there are items (slots of thread numbers below the count; parallel.h
 * says only 0..THREADS-1, but a thread with no item to take is one
 * wasted). */
START_TEST(test_more_threads_than_items)
{
    static const unsigned counts[] = {2, 5, 17, SP_THREADS_MAX};
    static const size_t items[] = {1, 2, 3, 4, 16};

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t n = 0; n < sizeof items / sizeof items[0]; n++) {
            struct rec *r;

            if (items[n] >= counts[c])
                continue;
            r = start(counts[c], items[n]);
            r->work_us = 100;
            check_ok(r, run(r));
            for (size_t i = 0; i < r->count; i++)
                expect(r->work_slot[i] / SP_RUN_DEPTH < r->count,
                       "%u threads, %zu items: slot %u used", r->threads,
                       r->count, r->work_slot[i]);
        }
}
END_TEST

/* ---- many runs ---- */

/* Run after run, clean and failing, on few threads and many: all correct
 * (a lost wakeup would hang one, and Check's timeout fail it), and the
 * process ends with the threads it began with. */
START_TEST(test_repeated_runs)
{
    int tasks = base_tasks();
    uint32_t rng = 2024;

    for (int run_no = 0; run_no < 200; run_no++) {
        struct rec *r = start(4, 50);

        check_ok(r, run(r));
    }
    for (int run_no = 0; run_no < 400; run_no++) {
        struct rec *r;
        size_t k;

        rng = rng * 1103515245u + 12345u;
        r = start(1 + (rng >> 8) % 8, (rng >> 12) % 61);
        k = r->count > 0 ? (rng >> 20) % r->count : 0;
        r->work_us = run_no % 3 == 0 ? 20 : 0;
        switch (r->count > 0 ? (rng >> 28) % 4 : 0) {
        case 1:
            r->work_fail[k] = EIO;
            check_stopped(r, run(r), EIO, k, 0);
            break;
        case 2:
            r->finish_fail[k] = EPIPE;
            check_stopped(r, run(r), EPIPE, k, 1);
            break;
        default:
            check_ok(r, run(r));
            break;
        }
    }
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

static Suite *parallel_suite(void)
{
    Suite *s = suite_create("parallel");
    TCase *tc = fx_tcase("ordered");

    tcase_add_loop_test(tc, test_each_item_once, 0, 18);
    tcase_add_loop_test(tc, test_order_under_jitter, 0, 6);
    tcase_add_loop_test(tc, test_works_at_once, 0, 19);
    tcase_add_loop_test(tc, test_threads_not_pinned, 0, 3);
    tcase_add_loop_test(tc, test_threads_placed, 0, 3);
    tcase_add_test(tc, test_work_during_finish);
    suite_add_tcase(s, tc);

    tc = fx_tcase("combining");
    tcase_add_loop_test(tc, test_work_ahead, 0, 5);
    tcase_add_loop_test(tc, test_finish_elsewhere, 0, 2);
    suite_add_tcase(s, tc);

    tc = fx_tcase("failures");
    tcase_add_loop_test(tc, test_item_fails, 0, 2);
    tcase_add_test(tc, test_lowest_failure_wins);
    tcase_add_test(tc, test_all_fail);
    tcase_add_test(tc, test_no_finish_after_failure);
    tcase_add_loop_test(tc, test_fewer_threads, 0, 5);
#ifndef UNDER_SANITIZER
    tcase_add_test(tc, test_thread_start_fails);
#endif
    suite_add_tcase(s, tc);

    tc = fx_tcase("usage");
    tcase_add_test(tc, test_bad_threads);
    tcase_add_test(tc, test_no_items);
    tcase_add_test(tc, test_more_threads_than_items);
    suite_add_tcase(s, tc);

    tc = fx_tcase("runs");
    tcase_add_test(tc, test_repeated_runs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(parallel_suite());
}
