/* The full transfers of sys.c, through the syscall seam: short transfers
 * of 1..7 bytes and EINTR between them give the whole buffer; end of file
 * stops a read early; a failing call's errno comes back, with the bytes
 * moved before it; a write that moves nothing is EIO; writev keeps within
 * IOV_MAX; and the real calls, once, through a pipe and a file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fixtures.h"
#include "sys.h"

#define CAP 64

/* The fake file every swapped call works on: DATA[0, END) is what a read
 * finds and where a write goes; a call moves at most STEP bytes, every
 * EINTR_EVERY-th call fails with EINTR, and a call that starts at FAIL_AT
 * or after fails with FAIL_ERR (0: never). */
static struct {
    unsigned char data[CAP];
    size_t end, pos, step, fail_at;
    int fail_err, eintr_every, calls;
} f;

/* fill: the pattern every test expects, byte I of the file at BUF[I]. */
static void fill(unsigned char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(i * 7 + 1);
}

static void fake_reset(size_t end, size_t step, int eintr_every)
{
    memset(&f, 0, sizeof f);
    fill(f.data, CAP);
    f.end = end;
    f.step = step;
    f.eintr_every = eintr_every;
    f.fail_at = CAP + 1;
}

/* fake_take: how many bytes this call moves (0 at END), or -1 with errno
 * set for EINTR and the planned failure. */
static ssize_t fake_take(size_t at, size_t len)
{
    size_t n = len < f.step ? len : f.step;

    if (f.eintr_every > 0 && ++f.calls % f.eintr_every == 0) {
        errno = EINTR;
        return -1;
    }
    if (f.fail_err != 0 && at >= f.fail_at) {
        errno = f.fail_err;
        return -1;
    }
    if (f.fail_err != 0 && n > f.fail_at - at)
        n = f.fail_at - at;
    if (n > f.end - at)
        n = f.end - at;
    return (ssize_t)n;
}

static ssize_t fake_read(int fd, void *buf, size_t len)
{
    ssize_t n = fake_take(f.pos, len);

    (void)fd;
    if (n > 0) {
        memcpy(buf, f.data + f.pos, (size_t)n);
        f.pos += (size_t)n;
    }
    return n;
}

static ssize_t fake_pread(int fd, void *buf, size_t len, off_t off)
{
    ssize_t n;

    (void)fd;
    /* each call must start where the last one stopped */
    ck_assert_int_eq(off, (off_t)f.pos);
    n = fake_take(f.pos, len);
    if (n > 0) {
        memcpy(buf, f.data + f.pos, (size_t)n);
        f.pos += (size_t)n;
    }
    return n;
}

static ssize_t fake_write(int fd, const void *buf, size_t len)
{
    ssize_t n = fake_take(f.pos, len);

    (void)fd;
    if (n > 0) {
        memcpy(f.data + f.pos, buf, (size_t)n);
        f.pos += (size_t)n;
    }
    return n;
}

static ssize_t fake_writev(int fd, const struct iovec *iov, int cnt)
{
    size_t len = 0;
    ssize_t n;

    ck_assert_int_gt(cnt, 0);
    ck_assert_int_le(cnt, IOV_MAX);
    for (int i = 0; i < cnt; i++)
        len += iov[i].iov_len;
    n = fake_take(f.pos, len);
    for (size_t left = n > 0 ? (size_t)n : 0; left > 0; iov++) {
        size_t k = left < iov->iov_len ? left : iov->iov_len;
        memcpy(f.data + f.pos, iov->iov_base, k);
        f.pos += k;
        left -= k;
    }
    (void)fd;
    return n;
}

static ssize_t fake_vmsplice(int fd, const struct iovec *iov, size_t cnt,
                             unsigned flags)
{
    ck_assert_uint_le(cnt, IOV_MAX);
    ck_assert_uint_eq(flags, 0);
    return fake_writev(fd, iov, (int)cnt);
}

/* The loop tests' parameters: STEP 1..7 bytes a call, and EINTR on every
 * second or third call (or never). */
#define NSTEPS 7
#define NEINTR 3
static const int eintr_everies[NEINTR] = {0, 2, 3};

static void fake_reset_loop(int i, size_t end)
{
    fake_reset(end, (size_t)(i % NSTEPS) + 1, eintr_everies[i / NSTEPS]);
}

/* expect_data: BUF holds the fake file's bytes [FROM, FROM + LEN). */
static void expect_data(const unsigned char *buf, size_t from, size_t len)
{
    for (size_t i = 0; i < len; i++)
        ck_assert_uint_eq(buf[i], (unsigned char)((from + i) * 7 + 1));
}

START_TEST(test_read_whole)
{
    unsigned char buf[CAP];
    size_t got = 0;

    fake_reset_loop(_i, CAP);
    sp_sys.read = fake_read;
    ck_assert_int_eq(sp_sys_read_full(3, buf, CAP, &got), SP_OK);
    ck_assert_uint_eq(got, CAP);
    expect_data(buf, 0, CAP);
}
END_TEST

START_TEST(test_pread_whole)
{
    unsigned char buf[CAP];
    size_t got = 0;

    fake_reset_loop(_i, CAP);
    f.pos = 5;
    sp_sys.pread = fake_pread;
    ck_assert_int_eq(sp_sys_pread_full(3, buf, CAP - 5, 5, &got), SP_OK);
    ck_assert_uint_eq(got, CAP - 5);
    expect_data(buf, 5, CAP - 5);
}
END_TEST

START_TEST(test_write_whole)
{
    unsigned char src[CAP];

    fill(src, CAP);
    fake_reset_loop(_i % (NSTEPS * NEINTR), CAP);
    memset(f.data, 0, CAP);  /* a sink now: nothing in it yet */
    sp_sys.write = fake_write;
    ck_assert_int_eq(sp_sys_write_full(3, src, CAP), SP_OK);
    expect_data(f.data, 0, f.pos);
    ck_assert_uint_eq(f.pos, CAP);
}
END_TEST

/* Buffers of 0..12 bytes, empty ones among them, cut anywhere; by writev
 * and by vmsplice. */
START_TEST(test_writev_whole)
{
    static const size_t lens[] = {0, 5, 12, 0, 1, 9, 3, 0, 11, 7, 10, 6, 0};
    enum { N = sizeof lens / sizeof lens[0] };
    unsigned char src[CAP];
    struct iovec iov[N];
    size_t at = 0;

    fill(src, CAP);
    for (size_t i = 0; i < N; i++) {
        iov[i].iov_base = src + at;
        iov[i].iov_len = lens[i];
        at += lens[i];
    }
    fake_reset_loop(_i % (NSTEPS * NEINTR), CAP);
    memset(f.data, 0, CAP);  /* a sink now: nothing in it yet */
    sp_sys.writev = fake_writev;
    sp_sys.vmsplice = fake_vmsplice;
    /* the loop's first half with writev, its second with vmsplice */
    if (_i < NSTEPS * NEINTR)
        ck_assert_int_eq(sp_sys_writev_full(3, iov, N), SP_OK);
    else
        ck_assert_int_eq(sp_sys_vmsplice_full(3, iov, N), SP_OK);
    ck_assert_uint_eq(f.pos, at);
    expect_data(f.data, 0, at);
}
END_TEST

/* End of file stops a read early, and is not an error. */
START_TEST(test_read_eof)
{
    unsigned char buf[CAP];
    size_t got = 99;

    fake_reset(20, 3, 2);
    sp_sys.read = fake_read;
    ck_assert_int_eq(sp_sys_read_full(3, buf, CAP, &got), SP_OK);
    ck_assert_uint_eq(got, 20);
    expect_data(buf, 0, 20);
    ck_assert_int_eq(sp_sys_read_full(3, buf, CAP, &got), SP_OK);
    ck_assert_uint_eq(got, 0);

    fake_reset(20, 3, 2);
    f.pos = 15;
    sp_sys.pread = fake_pread;
    ck_assert_int_eq(sp_sys_pread_full(3, buf, CAP, 15, &got), SP_OK);
    ck_assert_uint_eq(got, 5);
    expect_data(buf, 15, 5);
}
END_TEST

/* LEN 0 makes no call. */
START_TEST(test_nothing_to_do)
{
    unsigned char buf[1];
    struct iovec iov[2] = {{buf, 0}, {buf, 0}};
    size_t got = 99;

    fake_reset(CAP, 1, 0);
    f.fail_err = EBADF;
    f.fail_at = 0;
    sp_sys.read = fake_read;
    sp_sys.pread = fake_pread;
    sp_sys.write = fake_write;
    sp_sys.writev = fake_writev;
    ck_assert_int_eq(sp_sys_read_full(3, buf, 0, &got), SP_OK);
    ck_assert_uint_eq(got, 0);
    got = 99;
    ck_assert_int_eq(sp_sys_pread_full(3, buf, 0, 0, &got), SP_OK);
    ck_assert_uint_eq(got, 0);
    ck_assert_int_eq(sp_sys_write_full(3, buf, 0), SP_OK);
    ck_assert_int_eq(sp_sys_writev_full(3, iov, 2), SP_OK);
    ck_assert_int_eq(sp_sys_writev_full(3, iov, 0), SP_OK);
    ck_assert_int_eq(f.calls, 0);
}
END_TEST

/* A call that fails part way: its errno, and the bytes read before it. */
START_TEST(test_errors)
{
    unsigned char buf[CAP];
    struct iovec iov = {buf, CAP};
    size_t got = 0;

    fake_reset(CAP, 4, 3);
    f.fail_err = EIO;
    f.fail_at = 10;
    sp_sys.read = fake_read;
    ck_assert_int_eq(sp_sys_read_full(3, buf, CAP, &got), EIO);
    ck_assert_uint_eq(got, 10);
    expect_data(buf, 0, 10);

    f.pos = 2;
    sp_sys.pread = fake_pread;
    ck_assert_int_eq(sp_sys_pread_full(3, buf, CAP, 2, &got), EIO);
    ck_assert_uint_eq(got, 8);
    ck_assert_int_eq(sp_sys_pread_full(3, buf, 4, -1, &got), EINVAL);
    ck_assert_uint_eq(got, 0);

    f.pos = 0;
    f.fail_err = ENOSPC;
    sp_sys.write = fake_write;
    ck_assert_int_eq(sp_sys_write_full(3, buf, CAP), ENOSPC);
    ck_assert_uint_eq(f.pos, 10);
    f.pos = 0;
    sp_sys.writev = fake_writev;
    ck_assert_int_eq(sp_sys_writev_full(3, &iov, 1), ENOSPC);
    ck_assert_uint_eq(f.pos, 10);
}
END_TEST

/* A write that moves nothing (the fake file is full) is EIO, not a loop. */
START_TEST(test_write_nothing_is_eio)
{
    unsigned char buf[CAP] = {0};
    struct iovec iov[2] = {{buf, 8}, {buf, 8}};

    fake_reset(12, 5, 2);
    sp_sys.write = fake_write;
    ck_assert_int_eq(sp_sys_write_full(3, buf, 16), EIO);
    ck_assert_uint_eq(f.pos, 12);
    f.pos = 0;
    sp_sys.writev = fake_writev;
    ck_assert_int_eq(sp_sys_writev_full(3, iov, 2), EIO);
    ck_assert_uint_eq(f.pos, 12);
}
END_TEST

/* counting_writev: takes every byte it is given, at most IOV_MAX buffers
 * a call, and adds them up in f.pos. */
static ssize_t counting_writev(int fd, const struct iovec *iov, int cnt)
{
    size_t len = 0;

    (void)fd;
    f.calls++;
    ck_assert_int_le(cnt, IOV_MAX);
    for (int i = 0; i < cnt; i++)
        for (size_t k = 0; k < iov[i].iov_len; k++)
            len += ((const unsigned char *)iov[i].iov_base)[k];
    f.pos += len;
    return (ssize_t)len;
}

/* More buffers than one writev takes: two calls, every byte once. */
START_TEST(test_writev_over_iov_max)
{
    enum { N = IOV_MAX + 10 };
    struct iovec *iov = calloc(N, sizeof *iov);
    unsigned char one = 1;

    ck_assert(iov != NULL);
    for (size_t i = 0; i < N; i++) {
        iov[i].iov_base = &one;
        iov[i].iov_len = 1;
    }
    fake_reset(0, 0, 0);
    sp_sys.writev = counting_writev;
    ck_assert_int_eq(sp_sys_writev_full(3, iov, N), SP_OK);
    ck_assert_uint_eq(f.pos, N);
    ck_assert_int_eq(f.calls, 2);
    free(iov);
}
END_TEST

/* The real calls, with the seam untouched: through a pipe, and a file. */
START_TEST(test_real_calls)
{
    unsigned char src[CAP], buf[CAP];
    struct iovec iov[2] = {{src, 10}, {src + 10, CAP - 10}};
    size_t got = 0;
    int p[2], fd;

    fill(src, CAP);
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(sp_sys_write_full(p[1], src, CAP), SP_OK);
    ck_assert_int_eq(sp_sys_writev_full(p[1], iov, 2), SP_OK);
    close(p[1]);
    ck_assert_int_eq(sp_sys_read_full(p[0], buf, CAP, &got), SP_OK);
    ck_assert_uint_eq(got, CAP);
    expect_data(buf, 0, CAP);
    ck_assert_int_eq(sp_sys_read_full(p[0], buf, CAP, &got), SP_OK);
    ck_assert_uint_eq(got, CAP);
    expect_data(buf, 0, CAP);
    ck_assert_int_eq(sp_sys_read_full(p[0], buf, CAP, &got), SP_OK);
    ck_assert_uint_eq(got, 0);
    ck_assert_int_eq(sp_sys_write_full(p[0], src, 1), EBADF);
    close(p[0]);

    fx_write_file(fx_path("f"), src, CAP);
    fd = open(fx_path("f"), O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(sp_sys_pread_full(fd, buf, CAP, 9, &got), SP_OK);
    ck_assert_uint_eq(got, CAP - 9);
    expect_data(buf, 9, CAP - 9);
    close(fd);
}
END_TEST

static Suite *sys_suite(void)
{
    Suite *s = suite_create("sys");
    TCase *tc = fx_tcase("whole");

    tcase_add_loop_test(tc, test_read_whole, 0, NSTEPS * NEINTR);
    tcase_add_loop_test(tc, test_pread_whole, 0, NSTEPS * NEINTR);
    tcase_add_loop_test(tc, test_write_whole, 0, NSTEPS * NEINTR);
    tcase_add_loop_test(tc, test_writev_whole, 0, 2 * NSTEPS * NEINTR);
    tcase_add_test(tc, test_writev_over_iov_max);
    suite_add_tcase(s, tc);

    tc = fx_tcase("ends");
    tcase_add_test(tc, test_read_eof);
    tcase_add_test(tc, test_nothing_to_do);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_write_nothing_is_eio);
    tcase_add_test(tc, test_real_calls);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(sys_suite());
}
