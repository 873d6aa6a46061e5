/* The server's workers and their bounded queue (src/serve/pool.c): a
 * task beyond the workers and the queue is refused at once, and stopping
 * runs every task taken. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "fixtures.h"
#include "pool.h"

/* The tasks block until the gate opens, so that the test knows how many
 * are running. */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;
static atomic_int ran;

static void task(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gate_mu);
    while (!gate_open)
        pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
    atomic_fetch_add(&ran, 1);
}

static void open_gate(void)
{
    pthread_mutex_lock(&gate_mu);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

/* fill: WORKERS workers and a queue of QUEUE: exactly WORKERS + QUEUE
 * tasks taken, the next refused; all of them run by the stop. */
static void fill(unsigned workers, size_t queue)
{
    struct sp_pool pool;
    unsigned busy;
    size_t queued;

    gate_open = 0;
    atomic_store(&ran, 0);
    ck_assert_int_eq(sp_pool_start(&pool, workers, queue, 256 * 1024, task),
                     0);
    for (size_t i = 0; i < workers + queue; i++)
        ck_assert_int_eq(sp_pool_submit(&pool, NULL), 0);
    ck_assert_int_eq(sp_pool_submit(&pool, NULL), EAGAIN);
    sp_pool_load(&pool, &busy, &queued);
    ck_assert_uint_eq(busy + queued, workers + queue);
    open_gate();
    sp_pool_stop(&pool);
    ck_assert_int_eq(atomic_load(&ran), (int)(workers + queue));
}

START_TEST(test_full)
{
    fill(1, 1);
    fill(2, 0);
    fill(3, 5);
}
END_TEST

static Suite *serve_pool_suite(void)
{
    Suite *s = suite_create("serve_pool");
    TCase *tc = fx_tcase("serve_pool");

    tcase_add_test(tc, test_full);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(serve_pool_suite());
}
