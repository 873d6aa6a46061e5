/* The band scheduler: every row exactly once, in contiguous bands of
 * floor or ceil rows/T, T clamped to the rows, errors collected. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "fixtures.h"
#include "parallel.h"

#define MAX_ROWS 2048

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

static void check_cover(size_t rows, unsigned threads)
{
    static struct tally t;
    unsigned used = 12345, want = threads < rows ? threads : (unsigned)rows;
    sp_status st;

    memset(&t, 0, sizeof t);
    t.rows = rows;
    atomic_store(&t.min_band, (size_t)-1);
    st = run_bands(rows, threads, count_rows, &t, &used);
    ck_assert_msg(st == SP_OK, "%zu rows %u threads: %d", rows, threads, st);
    ck_assert_msg(used == want, "%zu rows %u threads: used %u", rows, threads,
                  used);
    ck_assert_int_eq(atomic_load(&t.calls), (int)want);
    ck_assert_int_eq(atomic_load(&t.empty), 0);
    ck_assert_int_eq(atomic_load(&t.out_of_range), 0);
    for (size_t y = 0; y < rows; y++)
        ck_assert_msg(atomic_load(&t.hits[y]) == 1,
                      "%zu rows %u threads: row %zu done %d times", rows,
                      threads, y, atomic_load(&t.hits[y]));
    if (rows > 0) {
        /* Bands of floor or ceil rows/T. */
        ck_assert_uint_ge(atomic_load(&t.min_band), rows / want);
        ck_assert_uint_le(atomic_load(&t.max_band),
                          (rows + want - 1) / want);
    }
}

/* Rows 1..50 (_i) against threads 1..64 and 1024.  Every thread count up
 * to rows + 2 is run; above that T is clamped to the rows and the run is
 * the same as at rows + 1, so only 63, 64 and 1024 stand for the rest
 * (each run starts T threads, and a sanitizer build makes that slow). */
START_TEST(test_cover_each_row_once)
{
    size_t rows = (size_t)_i;

    for (unsigned threads = 1; threads <= 64; threads++)
        if (threads <= rows + 2 || threads >= 63)
            check_cover(rows, threads);
    check_cover(rows, SP_THREADS_MAX);
}
END_TEST

START_TEST(test_cover_more)
{
    static const size_t rows[] = {63, 64, 65, 1025, 2048};
    static const unsigned threads[] = {1, 3, 10, 64, 1000, 1024};

    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++)
            check_cover(rows[r], threads[t]);
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

/* The bands run at the same time, each in a thread of its own: they all
 * meet at a barrier (run one after another, they would never get past). */
struct meet {
    pthread_barrier_t barrier;
    pthread_t ids[64];
    atomic_int n;
};

static sp_status meet_band(void *arg, unsigned band, size_t y0,
                           size_t y1)
{
    struct meet *m = arg;

    (void)band;
    (void)y0;
    (void)y1;
    m->ids[atomic_fetch_add(&m->n, 1)] = pthread_self();
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
        for (unsigned i = 0; i < threads; i++) {
            ck_assert(!pthread_equal(m.ids[i], self));
            for (unsigned j = 0; j < i; j++)
                ck_assert(!pthread_equal(m.ids[i], m.ids[j]));
        }
        pthread_barrier_destroy(&m.barrier);
    }
}
END_TEST

static Suite *parallel_suite(void)
{
    Suite *s = suite_create("parallel");
    TCase *tc = fx_tcase("bands");

    tcase_add_loop_test(tc, test_cover_each_row_once, 1, 51);
    tcase_add_test(tc, test_cover_more);
    tcase_add_test(tc, test_zero_rows);
    tcase_add_test(tc, test_used_null);
    tcase_add_test(tc, test_usage);
    tcase_add_test(tc, test_band_error);
    tcase_add_test(tc, test_all_bands_fail);
    tcase_add_test(tc, test_bands_concurrent);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(parallel_suite());
}
