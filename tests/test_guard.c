/* The SIGBUS guard: a read of a mapping whose file was truncated under it
 * is SP_E_CHANGED from sp_guard_run, in the calling thread and in another
 * one, again and again, with SIGBUS unblocked afterwards; a guarded call
 * that does not fault returns its function's status; and a SIGBUS outside
 * a guarded call, with the handler installed, still kills the process.
 * The suite runs without sp_init() (fx_run_bare): the handler is installed
 * by sp_init() alone, and until then nothing installs it, nothing runs
 * unguarded, a mapped load reads, and libnetpbm is refused. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixtures.h"
#include "guard.h"
#include "header.h"
#include "init.h"

/* A two-page file, mapped whole, then truncated to nothing: every byte of
 * the mapping faults. */
struct cut_map {
    volatile unsigned char *p;
    size_t len;
};

static void cut_map_make(struct cut_map *m)
{
    const char *path = fx_path("f");
    unsigned char buf[2 * 4096] = {1};
    void *p;
    int fd;

    m->len = 2 * (size_t)sysconf(_SC_PAGESIZE);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    for (size_t done = 0; done < m->len; done += sizeof buf)  /* pages */
        ck_assert_int_eq(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
    p = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
    ck_assert(p != MAP_FAILED);
    ck_assert_int_eq(ftruncate(fd, 0), 0);
    close(fd);
    m->p = p;
}

static void cut_map_free(struct cut_map *m)
{
    munmap((void *)m->p, m->len);
}

/* touch: read the byte at ARG. */
static sp_status touch(void *arg)
{
    volatile unsigned char *b = arg;

    return *b == 255 ? 1 : SP_OK;
}

static sp_status answer(void *arg)
{
    return *(const sp_status *)arg;
}

static void expect_sigbus_unblocked(void)
{
    sigset_t now;

    ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
    ck_assert(!sigismember(&now, SIGBUS));
}

/* guarded_faults: sp_guard_run over every page of M, twice, then a call
 * that does not fault; the SP_E_CHANGED count, or -1 on a surprise. */
static void *guarded_faults(void *arg)
{
    struct cut_map *m = arg;
    sp_status want = 42;
    intptr_t changed = 0;

    for (int round = 0; round < 2; round++)
        for (size_t off = 0; off < m->len; off += m->len / 2)
            changed += sp_guard_run(touch, (void *)(m->p + off)) ==
                       SP_E_CHANGED;
    if (sp_guard_run(answer, &want) != 42)
        return (void *)(intptr_t)-1;
    return (void *)changed;
}

START_TEST(test_calling_thread)
{
    struct cut_map m;

    cut_map_make(&m);
    ck_assert_int_eq((intptr_t)guarded_faults(&m), 4);
    expect_sigbus_unblocked();
    cut_map_free(&m);
}
END_TEST

START_TEST(test_other_thread)
{
    struct cut_map m;
    pthread_t t[3];
    void *got;

    cut_map_make(&m);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, guarded_faults, &m), 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(pthread_join(t[i], &got), 0);
        ck_assert_int_eq((intptr_t)got, 4);
    }
    /* and this thread, which never ran a guarded call, still can */
    ck_assert_int_eq((intptr_t)guarded_faults(&m), 4);
    cut_map_free(&m);
}
END_TEST

START_TEST(test_status_passed)
{
    sp_status want;

    for (want = -3; want <= 3; want++)
        ck_assert_int_eq(sp_guard_run(answer, &want), want);
}
END_TEST

/* In a child: the handler installed (sp_init, the fixture), check that it
 * is there, then read the cut mapping unguarded.  The child must die of
 * SIGBUS; exit 2 says the handler was missing, 0 that the read survived. */
START_TEST(test_unguarded_kills)
{
    struct cut_map m;
    int status;
    pid_t pid;

    cut_map_make(&m);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct sigaction now;
        sp_status zero = SP_OK;

        if (sp_guard_run(answer, &zero) != SP_OK ||
            sigaction(SIGBUS, NULL, &now) != 0 ||
            !(now.sa_flags & SA_SIGINFO) || now.sa_sigaction == NULL)
            _exit(2);
        (void)touch((void *)m.p);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(!WIFEXITED(status) || WEXITSTATUS(status) != 2,
                  "the guard installed no SIGBUS handler");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* The sanitizer's SIGBUS handler was there before the guard's, and
     * ends the child as it would without the guard: a report and its
     * exit status. */
    ck_assert_msg(WIFSIGNALED(status) || WEXITSTATUS(status) != 0,
                  "the child survived the fault (status %#x)", status);
#else
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS,
                  "the child did not die of SIGBUS (status %#x)", status);
#endif
    cut_map_free(&m);
}
END_TEST

/* A program's own SIGBUS handler, installed before the guard's. */
static int seen_fd = -1;

static void program_handler(int sig)
{
    (void)sig;
    (void)write(seen_fd, "b", 1);
}

/* In a child: a program handler that returns, then the guard's (sp_init
 * after it, as main.c does); an unguarded fault must reach the program's
 * handler (its cleanup) and still kill the child with SIGBUS. */
START_TEST(test_unguarded_chains)
{
    struct cut_map m;
    int status, p[2];
    char c = 0;
    pid_t pid;

    cut_map_make(&m);
    ck_assert_int_eq(pipe(p), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct sigaction sa = {0};
        sp_status zero = SP_OK;

        close(p[0]);
        seen_fd = p[1];
        sa.sa_handler = program_handler;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, NULL) != 0 || sp_lib_init() != SP_OK ||
            sp_guard_run(answer, &zero) != SP_OK)
            _exit(2);
        (void)touch((void *)m.p);
        _exit(0);
    }
    close(p[1]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS,
                  "the child did not die of SIGBUS (status %#x)", status);
    ck_assert_msg(read(p[0], &c, 1) == 1 && c == 'b',
                  "the program's handler did not run");
    close(p[0]);
    cut_map_free(&m);
}
END_TEST

/* Before sp_init(): no SIGBUS handler of ours, a guarded call refused
 * without running, a PNM header refused saying why, and (libnetpbm set up
 * alone) a mapped load read instead; after it, the handler there and the
 * load mapped; a second sp_init() changes nothing. */
START_TEST(test_init)
{
    const char *path = fx_path("in.ppm");
    struct sp_load_info info;
    struct sp_image img, want;
    struct sigaction first, now;
    sp_status zero = SP_OK;

    fx_make_image(&want, 16, 8, 3, 1, 255, 1);
    fx_write_image(path, &want);
    /* the default, or a sanitizer's handler: whatever was there first */
    ck_assert_int_eq(sigaction(SIGBUS, NULL, &first), 0);
    ck_assert(!sp_guard_ready());
    ck_assert_int_eq(sp_guard_run(answer, &zero), ENOTSUP);
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_E_BADHEADER);
    ck_assert_msg(strstr(info.why, "sp_init()") != NULL, "%s", info.why);

    sp_header_init();
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    ck_assert_int_eq(info.io_used, SP_IO_READ);
    ck_assert(fx_images_equal(&img, &want));
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    ck_assert_int_eq(sigaction(SIGBUS, NULL, &now), 0);
    ck_assert(now.sa_handler == first.sa_handler);

    ck_assert_int_eq(sp_lib_init(), SP_OK);
    ck_assert_int_eq(sp_lib_init(), SP_OK);
    ck_assert(sp_guard_ready());
    ck_assert_int_eq(sigaction(SIGBUS, NULL, &now), 0);
    ck_assert((now.sa_flags & SA_SIGINFO) && now.sa_sigaction != NULL &&
              now.sa_sigaction != first.sa_sigaction);
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    ck_assert_int_eq(info.io_used, SP_IO_MMAP);
    ck_assert(fx_images_equal(&img, &want));
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    sp_image_release(&want);
}
END_TEST

static void init_setup(void)
{
    ck_assert_int_eq(sp_lib_init(), SP_OK);
}

static Suite *guard_suite(void)
{
    Suite *s = suite_create("guard");
    TCase *tc = fx_tcase("guard");
    TCase *bare = fx_tcase("before_init");

    tcase_add_checked_fixture(tc, init_setup, NULL);
    tcase_add_test(tc, test_calling_thread);
    tcase_add_test(tc, test_other_thread);
    tcase_add_test(tc, test_status_passed);
    tcase_add_test(tc, test_unguarded_kills);
    suite_add_tcase(s, tc);
    tcase_add_test(bare, test_unguarded_chains);
    tcase_add_test(bare, test_init);
    suite_add_tcase(s, bare);
    return s;
}

int main(void)
{
    return fx_run_bare(guard_suite());
}
