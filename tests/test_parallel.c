/* The band scheduler: every row exactly once, in contiguous bands of
 * floor or ceil rows/T, T clamped to the rows, errors collected; and the
 * pool behind it: started once, used for many rounds, band b always on
 * the same thread (band 0 on the caller's), stopped with nothing left. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "fixtures.h"
#include "parallel.h"

#define MAX_ROWS 2048

/* expect: ck_assert_msg for hot loops: Check records the place of every
 * assertion that passes (a write() to its pipe in fork mode), so a loop
 * over rows tests first and only calls into Check when one fails. */
#define expect(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond))                                                         \
            ck_abort_msg(__VA_ARGS__);                                       \
    } while (0)

/* run_bands: ROWS rows over a pool of THREADS started for this call. */
static sp_status run_bands(size_t rows, unsigned threads, sp_band_fn fn,
                           void *arg, unsigned *used)
{
    struct sp_pool *pool;
    sp_status st = sp_pool_start(threads, &pool);

    if (st != SP_OK)
        return st;
    st = sp_pool_bands(pool, 0, rows, fn, arg, used);
    sp_pool_stop(pool);
    return st;
}

struct tally {
    size_t rows;
    atomic_int hits[MAX_ROWS];
    atomic_int calls;
    atomic_int empty;          /* bands with y1 <= y0 */
    atomic_int out_of_range;   /* bands past ROWS */
    atomic_size_t min_band, max_band;
};

static sp_status count_rows(void *arg, unsigned band, size_t y0,
                            size_t y1)
{
    struct tally *t = arg;
    size_t n = y1 - y0, seen;

    (void)band;
    atomic_fetch_add(&t->calls, 1);
    if (y1 <= y0) {
        atomic_fetch_add(&t->empty, 1);
        return SP_OK;
    }
    if (y1 > t->rows) {
        atomic_fetch_add(&t->out_of_range, 1);
        return SP_OK;
    }
    for (size_t y = y0; y < y1; y++)
        atomic_fetch_add(&t->hits[y], 1);
    seen = atomic_load(&t->min_band);
    while (n < seen && !atomic_compare_exchange_weak(&t->min_band, &seen, n))
        ;
    seen = atomic_load(&t->max_band);
    while (n > seen && !atomic_compare_exchange_weak(&t->max_band, &seen, n))
        ;
    return SP_OK;
}

/* check_cover: ROWS rows over POOL, of THREADS threads. */
static void check_cover(struct sp_pool *pool, size_t rows, unsigned threads)
{
    static struct tally t;
    unsigned used = 12345, want = threads < rows ? threads : (unsigned)rows;
    sp_status st;

    memset(&t, 0, sizeof t);
    t.rows = rows;
    atomic_store(&t.min_band, (size_t)-1);
    st = sp_pool_bands(pool, 0, rows, count_rows, &t, &used);
    expect(st == SP_OK, "%zu rows %u threads: %d", rows, threads, st);
    expect(used == want, "%zu rows %u threads: used %u", rows, threads,
           used);
    expect(atomic_load(&t.calls) == (int)want && atomic_load(&t.empty) == 0 &&
           atomic_load(&t.out_of_range) == 0, "%zu rows %u threads: %d "
           "calls, %d empty, %d out of range", rows, threads,
           atomic_load(&t.calls), atomic_load(&t.empty),
           atomic_load(&t.out_of_range));
    for (size_t y = 0; y < rows; y++)
        expect(atomic_load(&t.hits[y]) == 1,
               "%zu rows %u threads: row %zu done %d times", rows, threads,
               y, atomic_load(&t.hits[y]));
    /* Bands of floor or ceil rows/T. */
    expect(rows == 0 || (atomic_load(&t.min_band) >= rows / want &&
                         atomic_load(&t.max_band) <= (rows + want - 1) / want),
           "%zu rows %u threads: bands of %zu to %zu rows", rows, threads,
           atomic_load(&t.min_band), atomic_load(&t.max_band));
}

/* Threads 1..64 and SP_THREADS_MAX (_i) against rows 0..50, one pool for
 * them all. */
START_TEST(test_cover_each_row_once)
{
    unsigned threads = _i < 64 ? (unsigned)_i + 1 : SP_THREADS_MAX;
    struct sp_pool *pool;

    ck_assert_int_eq(sp_pool_start(threads, &pool), SP_OK);
    for (size_t rows = 0; rows <= 50; rows++)
        check_cover(pool, rows, threads);
    sp_pool_stop(pool);
}
END_TEST

START_TEST(test_cover_more)
{
    static const size_t rows[] = {63, 64, 65, 1025, 2048};
    static const unsigned threads[] = {1, 3, 10, 64, 1000, 1024};

    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        struct sp_pool *pool;

        ck_assert_int_eq(sp_pool_start(threads[t], &pool), SP_OK);
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
            check_cover(pool, rows[r], threads[t]);
        sp_pool_stop(pool);
    }
}
END_TEST

/* No rows: no bands, nothing run, success. */
START_TEST(test_zero_rows)
{
    static struct tally t;
    unsigned used = 12345;

    memset(&t, 0, sizeof t);
    ck_assert_int_eq(run_bands(0, 4, count_rows, &t, &used), SP_OK);
    ck_assert_uint_eq(used, 0);
    ck_assert_int_eq(atomic_load(&t.calls), 0);
}
END_TEST

/* The used count is optional. */
START_TEST(test_used_null)
{
    static struct tally t;

    memset(&t, 0, sizeof t);
    t.rows = 10;
    ck_assert_int_eq(run_bands(10, 3, count_rows, &t, NULL), SP_OK);
    ck_assert_int_eq(atomic_load(&t.calls), 3);
}
END_TEST

START_TEST(test_usage)
{
    static struct tally t;
    unsigned used;

    memset(&t, 0, sizeof t);
    t.rows = 10;
    ck_assert_int_eq(run_bands(10, 0, count_rows, &t, &used),
                     SP_E_USAGE);
    ck_assert_int_eq(run_bands(10, SP_THREADS_MAX + 1, count_rows, &t,
                                       &used), SP_E_USAGE);
    ck_assert_int_eq(run_bands(10, 1025, count_rows, &t, &used),
                     SP_E_USAGE);
    ck_assert_int_eq(run_bands(0, 0, count_rows, &t, &used),
                     SP_E_USAGE);
    ck_assert_int_eq(run_bands(10, (unsigned)-1, count_rows, &t,
                                       &used), SP_E_USAGE);
    ck_assert_int_eq(atomic_load(&t.calls), 0);
}
END_TEST

/* A band that fails: its status comes back, and every other band still
 * ran (and was joined). */
struct failing {
    size_t bad_row;        /* the band holding it fails */
    sp_status code;
    atomic_int calls;
    atomic_int done;
};

static sp_status fail_band(void *arg, unsigned band, size_t y0,
                           size_t y1)
{
    struct failing *f = arg;

    (void)band;
    atomic_fetch_add(&f->calls, 1);
    if (f->bad_row >= y0 && f->bad_row < y1)
        return f->code;
    atomic_fetch_add(&f->done, 1);
    return SP_OK;
}

START_TEST(test_band_error)
{
    static const size_t bad_rows[] = {0, 1, 17, 48, 49};
    static const sp_status codes[] = {ENOMEM, SP_E_TRUNCATED, EIO};

    for (size_t i = 0; i < sizeof bad_rows / sizeof bad_rows[0]; i++) {
        for (size_t c = 0; c < sizeof codes / sizeof codes[0]; c++) {
            for (unsigned threads = 1; threads <= 64; threads *= 4) {
                struct failing f = {.bad_row = bad_rows[i], .code = codes[c]};
                unsigned used;

                ck_assert_int_eq(run_bands(50, threads, fail_band, &f,
                                                   &used), codes[c]);
                ck_assert_int_eq(atomic_load(&f.calls), (int)used);
                ck_assert_int_eq(atomic_load(&f.done), (int)used - 1);
            }
        }
    }
}
END_TEST

/* Every band failing: one of their statuses, never success. */
static sp_status all_fail(void *arg, unsigned band, size_t y0,
                          size_t y1)
{
    (void)arg;
    (void)band;
    (void)y1;
    return y0 % 2 ? EIO : SP_E_CHANGED;
}

START_TEST(test_all_bands_fail)
{
    for (unsigned threads = 1; threads <= 20; threads++) {
        sp_status st = run_bands(20, threads, all_fail, NULL, NULL);
        ck_assert(st == EIO || st == SP_E_CHANGED);
    }
}
END_TEST

/* The bands run at the same time, each in a thread of its own, band 0 in
 * the caller's: they all meet at a barrier (run one after another, they
 * would never get past). */
struct meet {
    pthread_barrier_t barrier;
    pthread_t ids[64];
    atomic_int n;
    atomic_int bad_band;
};

static sp_status meet_band(void *arg, unsigned band, size_t y0,
                           size_t y1)
{
    struct meet *m = arg;

    (void)y0;
    (void)y1;
    atomic_fetch_add(&m->n, 1);
    if (band >= 64)
        atomic_fetch_add(&m->bad_band, 1);
    else
        m->ids[band] = pthread_self();
    pthread_barrier_wait(&m->barrier);
    return SP_OK;
}

START_TEST(test_bands_concurrent)
{
    static struct meet m;
    unsigned used;
    pthread_t self = pthread_self();

    for (unsigned threads = 2; threads <= 64; threads *= 2) {
        memset(&m, 0, sizeof m);
        ck_assert_int_eq(pthread_barrier_init(&m.barrier, NULL, threads), 0);
        ck_assert_int_eq(run_bands(200, threads, meet_band, &m, &used),
                         SP_OK);
        ck_assert_uint_eq(used, threads);
        ck_assert_int_eq(atomic_load(&m.n), (int)threads);
        ck_assert_int_eq(atomic_load(&m.bad_band), 0);
        ck_assert_msg(pthread_equal(m.ids[0], self),
                      "%u threads: band 0 did not run in the caller",
                      threads);
        for (unsigned i = 1; i < threads; i++) {
            ck_assert_msg(!pthread_equal(m.ids[i], self),
                          "%u threads: band %u ran in the caller", threads,
                          i);
            for (unsigned j = 1; j < i; j++)
                ck_assert_msg(!pthread_equal(m.ids[i], m.ids[j]),
                              "%u threads: bands %u and %u in one thread",
                              threads, j, i);
        }
        pthread_barrier_destroy(&m.barrier);
    }
}
END_TEST

/* ---- one pool, many rounds ---- */

/* count_tasks: the threads of this process (/proc/self/task). */
static int count_tasks(void)
{
    return fx_count_entries("/proc/self/task", NULL);
}

static void *idle(void *arg)
{
    return arg;
}

/* base_tasks: the threads of this process before a pool starts.  A thread
 * is started and joined first: ThreadSanitizer starts a thread of its own
 * with the process's first, and keeps it. */
static int base_tasks(void)
{
    pthread_t t;

    ck_assert_int_eq(pthread_create(&t, NULL, idle, NULL), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    return count_tasks();
}

#define POOL_MAX_THREADS 16
#define ROUND_MAX_ROW 600

/* One round's record, written by the band functions.  Each band writes
 * only its own slot; the rows are counted atomically. */
struct round_rec {
    atomic_int hits[ROUND_MAX_ROW];
    atomic_int calls;
    atomic_int bad;                  /* a band number out of range */
    size_t y0[POOL_MAX_THREADS], y1[POOL_MAX_THREADS];
    int ran[POOL_MAX_THREADS];
    pthread_t tid[POOL_MAX_THREADS];
    sp_status fail[POOL_MAX_THREADS];  /* what band b returns */
};

static sp_status record_band(void *arg, unsigned band, size_t y0, size_t y1)
{
    struct round_rec *r = arg;

    atomic_fetch_add(&r->calls, 1);
    if (band >= POOL_MAX_THREADS || y1 > ROUND_MAX_ROW || y0 > y1) {
        atomic_fetch_add(&r->bad, 1);
        return SP_OK;
    }
    r->ran[band]++;
    r->y0[band] = y0;
    r->y1[band] = y1;
    r->tid[band] = pthread_self();
    for (size_t y = y0; y < y1; y++)
        atomic_fetch_add(&r->hits[y], 1);
    return r->fail[band];
}

/* check_round: after sp_pool_bands(pool, Y0, Y1, ...) with a pool of
 * THREADS: every row of [Y0, Y1) once and no other, T = min(threads,
 * rows) bands 0..T-1 each once, contiguous in band order, of floor or
 * ceil rows/T rows; USED is T. */
static void check_round(const struct round_rec *r, unsigned threads,
                        size_t y0, size_t y1, unsigned used, int round)
{
    size_t rows = y1 > y0 ? y1 - y0 : 0;
    unsigned want = rows < threads ? (unsigned)rows : threads;

    expect(used == want, "round %d [%zu, %zu) %u threads: used %u", round,
           y0, y1, threads, used);
    expect(atomic_load(&r->bad) == 0, "round %d: a band out of range",
           round);
    expect(atomic_load(&r->calls) == (int)want, "round %d: %d calls, want "
           "%u", round, atomic_load(&r->calls), want);
    for (size_t y = 0; y < ROUND_MAX_ROW; y++)
        expect(atomic_load(&r->hits[y]) == (y >= y0 && y < y1),
                      "round %d [%zu, %zu) %u threads: row %zu done %d "
                      "times", round, y0, y1, threads, y,
                      atomic_load(&r->hits[y]));
    for (unsigned b = 0; b < POOL_MAX_THREADS; b++) {
        expect(r->ran[b] == (b < want), "round %d: band %u ran %d times "
               "(%u bands)", round, b, r->ran[b], want);
        if (b >= want)
            continue;
        expect(r->y0[b] == (b == 0 ? y0 : r->y1[b - 1]) &&
               r->y1[b] - r->y0[b] >= rows / want &&
               r->y1[b] - r->y0[b] <= (rows + want - 1) / want,
               "round %d [%zu, %zu): band %u is [%zu, %zu) of %u", round,
               y0, y1, b, r->y0[b], r->y1[b], want);
    }
    expect(want == 0 || r->y1[want - 1] == y1, "round %d: the last band "
           "ends at %zu, not %zu", round, r->y1[want - 1], y1);
}

/* A pool is started once and used for many rounds of random [y0, y1),
 * some empty, some with fewer rows than threads: each round covers its
 * rows exactly once, band b always runs on the same thread (band 0 on
 * the caller's), and the pool holds exactly THREADS - 1 threads of its
 * own until it is stopped. */
START_TEST(test_pool_rounds)
{
    static const unsigned counts[] = {1, 2, 3, 5, 16};
    static struct round_rec r;
    unsigned threads = counts[_i];
    int rounds = threads == 16 ? 500 : 2000;
    pthread_t first[POOL_MAX_THREADS];
    int seen[POOL_MAX_THREADS] = {0};
    int tasks = base_tasks();
    uint32_t rng = 2024u + threads;
    struct sp_pool *pool = NULL;

    ck_assert_int_eq(sp_pool_start(threads, &pool), SP_OK);
    ck_assert_ptr_nonnull(pool);
    ck_assert_int_eq(count_tasks(), tasks + (int)threads - 1);
    for (int round = 0; round < rounds; round++) {
        size_t y0, y1;
        unsigned used = 12345;
        sp_status st;

        rng = rng * 1103515245u + 12345u;
        y0 = (rng >> 8) % 300;
        switch ((rng >> 4) % 4) {
        case 0:   /* empty, or backwards: no rows */
            y1 = (rng >> 20) % 2 ? y0 : y0 / 2;
            break;
        case 1:   /* fewer rows than threads */
            y1 = y0 + (rng >> 20) % (threads + 1);
            break;
        default:
            y1 = y0 + (rng >> 20) % 300;
            break;
        }
        memset(&r, 0, sizeof r);
        st = sp_pool_bands(pool, y0, y1, record_band, &r, &used);
        expect(st == SP_OK, "round %d: %s", round, sp_strerror(st));
        check_round(&r, threads, y0, y1, used, round);
        for (unsigned b = 0; b < used; b++) {
            if (!seen[b]) {
                first[b] = r.tid[b];
                seen[b] = 1;
            }
            expect(pthread_equal(r.tid[b], first[b]),
                   "round %d: band %u moved to another thread", round, b);
        }
        expect(used == 0 || pthread_equal(r.tid[0], pthread_self()),
               "round %d: band 0 not in the caller", round);
    }
    /* Every band ran at some point, each on its own thread. */
    for (unsigned b = 0; b < threads; b++) {
        ck_assert_msg(seen[b], "band %u never ran", b);
        for (unsigned c = 0; c < b; c++)
            ck_assert(!pthread_equal(first[b], first[c]));
    }
    ck_assert_int_eq(count_tasks(), tasks + (int)threads - 1);
    sp_pool_stop(pool);
    ck_assert_int_eq(count_tasks(), tasks);
}
END_TEST

/* A band that fails in a later round: that round returns its status (the
 * first failing band's, in band order), every band of it still ran, and
 * the rounds after it succeed again, including rounds with fewer bands
 * than the one that failed. */
START_TEST(test_pool_error_then_ok)
{
    static struct round_rec r;
    struct sp_pool *pool;
    unsigned used;

    ck_assert_int_eq(sp_pool_start(4, &pool), SP_OK);
    for (int round = 0; round < 40; round++) {
        memset(&r, 0, sizeof r);
        ck_assert_int_eq(sp_pool_bands(pool, 0, 100, record_band, &r, &used),
                         SP_OK);
        check_round(&r, 4, 0, 100, used, round);
    }

    /* Band 3 fails: its status, all four bands ran. */
    memset(&r, 0, sizeof r);
    r.fail[3] = EIO;
    ck_assert_int_eq(sp_pool_bands(pool, 10, 50, record_band, &r, &used),
                     EIO);
    check_round(&r, 4, 10, 50, used, -1);

    /* A round of two bands after it: band 3's old status is not its. */
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(sp_pool_bands(pool, 7, 9, record_band, &r, &used),
                     SP_OK);
    check_round(&r, 4, 7, 9, used, -2);

    /* Bands 1 and 2 fail: band 1's status comes back. */
    memset(&r, 0, sizeof r);
    r.fail[2] = SP_E_CHANGED;
    r.fail[1] = ENOMEM;
    ck_assert_int_eq(sp_pool_bands(pool, 0, 8, record_band, &r, &used),
                     ENOMEM);
    check_round(&r, 4, 0, 8, used, -3);

    /* Band 0, in the caller, fails; then one band, then all again. */
    memset(&r, 0, sizeof r);
    r.fail[0] = SP_E_TRUNCATED;
    ck_assert_int_eq(sp_pool_bands(pool, 0, 8, record_band, &r, &used),
                     SP_E_TRUNCATED);
    check_round(&r, 4, 0, 8, used, -4);
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(sp_pool_bands(pool, 3, 4, record_band, &r, &used),
                     SP_OK);
    check_round(&r, 4, 3, 4, used, -5);
    for (int round = 0; round < 40; round++) {
        memset(&r, 0, sizeof r);
        ck_assert_int_eq(sp_pool_bands(pool, 5, 5 + (size_t)round * 7,
                                       record_band, &r, &used), SP_OK);
        check_round(&r, 4, 5, 5 + (size_t)round * 7, used, round);
    }
    sp_pool_stop(pool);
}
END_TEST

/* Started and stopped with no round in between, at several sizes: the
 * threads come and go, nothing hangs.  Stopping NULL is a no-op. */
START_TEST(test_pool_start_stop)
{
    static const unsigned counts[] = {1, 2, 3, 10, 64, SP_THREADS_MAX};
    int tasks = base_tasks();

    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        struct sp_pool *pool = NULL;

        ck_assert_int_eq(sp_pool_start(counts[i], &pool), SP_OK);
        ck_assert_ptr_nonnull(pool);
        ck_assert_int_eq(count_tasks(), tasks + (int)counts[i] - 1);
        sp_pool_stop(pool);
        ck_assert_int_eq(count_tasks(), tasks);
    }
    sp_pool_stop(NULL);
    /* Many short-lived pools in a row. */
    for (int i = 0; i < 200; i++) {
        struct sp_pool *pool;

        ck_assert_int_eq(sp_pool_start(1 + (unsigned)i % 4, &pool), SP_OK);
        sp_pool_stop(pool);
    }
    ck_assert_int_eq(count_tasks(), tasks);
}
END_TEST

/* One thread: no thread is started and every band runs in the caller. */
START_TEST(test_pool_one_thread)
{
    static struct round_rec r;
    int tasks = base_tasks();
    struct sp_pool *pool;
    unsigned used;

    ck_assert_int_eq(sp_pool_start(1, &pool), SP_OK);
    ck_assert_int_eq(count_tasks(), tasks);
    for (size_t rows = 0; rows < 50; rows++) {
        memset(&r, 0, sizeof r);
        ck_assert_int_eq(sp_pool_bands(pool, rows, 2 * rows, record_band, &r,
                                       &used), SP_OK);
        check_round(&r, 1, rows, 2 * rows, used, (int)rows);
        if (rows > 0)
            ck_assert(pthread_equal(r.tid[0], pthread_self()));
    }
    memset(&r, 0, sizeof r);
    r.fail[0] = EIO;
    ck_assert_int_eq(sp_pool_bands(pool, 0, 10, record_band, &r, &used), EIO);
    ck_assert_int_eq(count_tasks(), tasks);
    sp_pool_stop(pool);
}
END_TEST

/* Thread counts out of range: SP_E_USAGE, no pool, no thread. */
START_TEST(test_pool_usage)
{
    static const unsigned bad[] = {0, SP_THREADS_MAX + 1, 1025, 100000,
                                   (unsigned)-1};
    int tasks = base_tasks();

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sp_pool *pool = (struct sp_pool *)&pool;  /* not NULL */

        ck_assert_int_eq(sp_pool_start(bad[i], &pool), SP_E_USAGE);
        ck_assert_ptr_null(pool);
        ck_assert_int_eq(count_tasks(), tasks);
    }
}
END_TEST

static Suite *parallel_suite(void)
{
    Suite *s = suite_create("parallel");
    TCase *tc = fx_tcase("bands");

    tcase_add_loop_test(tc, test_cover_each_row_once, 0, 65);
    tcase_add_test(tc, test_cover_more);
    tcase_add_test(tc, test_zero_rows);
    tcase_add_test(tc, test_used_null);
    tcase_add_test(tc, test_usage);
    tcase_add_test(tc, test_band_error);
    tcase_add_test(tc, test_all_bands_fail);
    tcase_add_test(tc, test_bands_concurrent);
    suite_add_tcase(s, tc);

    tc = fx_tcase("pool");
    tcase_add_loop_test(tc, test_pool_rounds, 0, 5);
    tcase_add_test(tc, test_pool_error_then_ok);
    tcase_add_test(tc, test_pool_start_stop);
    tcase_add_test(tc, test_pool_one_thread);
    tcase_add_test(tc, test_pool_usage);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(parallel_suite());
}
