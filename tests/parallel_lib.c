/* parallel_lib.c: the ordered runner's recording harness, which its suites
 * (test_parallel_*.c) share: item functions that record what the runner did
 * and count what went wrong (struct rec), the handshakes the hooks use, the
 * threads of the process, and the checks of a run's record. */
#include "parallel_lib.h"

const char *const bad_what[NBAD] = {
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
pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t hook_cv = PTHREAD_COND_INITIALIZER;

void pause_us(unsigned us)
{
    struct timespec ts = {.tv_sec = us / 1000000,
                          .tv_nsec = (long)(us % 1000000) * 1000};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* count_tasks: the threads of this process (/proc/self/task). */
int count_tasks(void)
{
    return fx_count_entries("/proc/self/task", NULL);
}

void *idle(void *arg)
{
    *(pid_t *)arg = gettid();
    return NULL;
}

/* wait_gone: wait up to MS milliseconds for task TID to leave
 * /proc/self/task; returns whether it did. */
int wait_gone(pid_t tid, int ms)
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
void gone(pid_t tid)
{
    (void)wait_gone(tid, 1000);
}

/* exited: task TID is gone, or ETIMEDOUT after WAIT_S: a runner's thread
 * that returned from the run.  No item function is called after a
 * failure is recorded, so this is the only sign that it was. */
sp_status exited(pid_t tid)
{
    return wait_gone(tid, WAIT_S * 1000) ? SP_OK : ETIMEDOUT;
}

/* base_tasks: the threads of this process before a run.  A thread is
 * started and joined first: ThreadSanitizer starts a thread of its own
 * with the process's first, and keeps it. */
int base_tasks(void)
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
int tasks_after(int want)
{
    int n = count_tasks();

    for (int i = 0; i < 1000 && n > want; i++) {
        pause_us(1000);
        n = count_tasks();
    }
    return n;
}

struct timespec deadline(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += WAIT_S;
    return ts;
}

void raise_flag(int *flag)
{
    pthread_mutex_lock(&hook_mu);
    *flag = 1;
    pthread_cond_broadcast(&hook_cv);
    pthread_mutex_unlock(&hook_mu);
}

/* arrive: count one in at *N. */
void arrive(int *n)
{
    pthread_mutex_lock(&hook_mu);
    ++*n;
    pthread_cond_broadcast(&hook_cv);
    pthread_mutex_unlock(&hook_mu);
}

/* wait_count: until *N reaches WANT, or ETIMEDOUT after WAIT_S: a runner
 * that never lets the other side run fails the test rather than hang. */
sp_status wait_count(const int *n, int want)
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
sp_status wait_flag(const int *flag)
{
    return wait_count(flag, 1);
}

/* meet: count in at *ARRIVED and wait until WANT have, or ETIMEDOUT.
 * Only the last to come wakes the others: with a thousand threads a
 * broadcast on every arrival would be a million wakeups. */
sp_status meet(int *arrived, int want)
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

void note(struct rec *r, enum bad what, size_t item)
{
    if (bump(&r->bad[what]) == 0)
        atomic_store_explicit(&r->bad_item[what], item, memory_order_relaxed);
}

/* used_threads: the threads the run needs: one an item, at least one. */
unsigned used_threads(const struct rec *r)
{
    if (r->count == 0)
        return 1;
    return r->count < r->threads ? (unsigned)r->count : r->threads;
}

/* in_range: whether SLOT is one of the used threads' and ITEM one of the
 * run's, so both can index the record. */
int in_range(struct rec *r, unsigned slot, size_t item)
{
    if (slot < used_threads(r) * SP_RUN_DEPTH && slot < SLOTS_MAX &&
        item < r->count && item < MAX_ITEMS)
        return 1;
    note(r, BAD_RANGE, item);
    return 0;
}

sp_status rec_work(void *arg, unsigned slot, size_t item)
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

sp_status rec_finish(void *arg, unsigned slot, size_t item)
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
struct rec *start(unsigned threads, size_t count)
{
    static struct rec r;

    ck_assert_uint_le(count, MAX_ITEMS);
    memset(&r, 0, sizeof r);
    r.threads = threads;
    r.count = count;
    r.caller = pthread_self();
    return &r;
}

sp_status run(struct rec *r)
{
    return sp_run_ordered(r->threads, r->count, rec_work, rec_finish, r,
                          &r->ran);
}

/* check_clean: nothing went wrong; if something did, all of it is named,
 * since one fault often brings others (a FINISH out of order is one with
 * the wrong slot too), and the first in the list need not be the cause. */
void check_clean(const struct rec *r)
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
unsigned check_threads(const struct rec *r)
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
unsigned check_ok(const struct rec *r, sp_status st)
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
void check_stopped(const struct rec *r, sp_status st, sp_status want,
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
