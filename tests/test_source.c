/* The row source (source.h): one contract, run against every backend,
 * the default path (pread) first: the rows asked for are the image's,
 * whatever EINTR and short transfers the system calls make; a failed read
 * is a status, never wrong bytes; a file that shrinks is SP_E_CHANGED
 * where the rows are still read from it; giving rows back never changes
 * the rows still wanted; the release leaves no descriptor or mapping.
 * Then the mmap backend's page release on its own. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fixtures.h"
#include "input.h"
#include "input_path.h"
#include "source.h"
#include "sys.h"

/* ---- the seam: EINTR every third call, at most 7 bytes a transfer ---- */

static unsigned calls;
static int fail_with;            /* every read fails with this, if set */

static size_t cap(size_t len)
{
    return len < 7 ? len : 7;
}

static int interrupted(void)
{
    if (fail_with != 0) {
        errno = fail_with;
        return 1;
    }
    if (++calls % 3 == 0) {
        errno = EINTR;
        return 1;
    }
    return 0;
}

static ssize_t jerky_read(int fd, void *buf, size_t len)
{
    return interrupted() ? -1 : read(fd, buf, cap(len));
}

static ssize_t jerky_pread(int fd, void *buf, size_t len, off_t off)
{
    return interrupted() ? -1 : pread(fd, buf, cap(len), off);
}

static ssize_t jerky_preadv2(int fd, const struct iovec *iov, int n,
                             off_t off, int flags)
{
    (void)n;
    (void)flags;
    return interrupted() ? -1 : pread(fd, iov[0].iov_base,
                                      cap(iov[0].iov_len), off);
}

static void jerky(void)
{
    calls = 0;
    fail_with = 0;
    sp_sys.read = jerky_read;
    sp_sys.pread = jerky_pread;
    sp_sys.preadv2 = jerky_preadv2;
}

/* The input the sources of a test read. */
static struct sp_input input = {.fd = -1};

/* open_source: IMG written to in.pnm and loaded by IO into S, through
 * INPUT (closed first, if it is open). */
static void open_source(struct sp_source *s, const struct sp_image *img,
                        enum sp_io io)
{
    struct sp_load_info info;

    if (input.fd >= 0)
        sp_input_close(&input);
    fx_write_image(fx_path("in.pnm"), img);
    ck_assert_int_eq(fx_input_open(&input, fx_path("in.pnm"), 0, NULL),
                     SP_OK);
    ck_assert_int_eq(sp_input_next(&input, io, NULL, NULL, &info), SP_OK);
    ck_assert_int_eq(info.io_used, io);
    sp_source_open(s, &input, 0);
    ck_assert_uint_eq(s->img.width, img->width);
    ck_assert_uint_eq(s->img.height, img->height);
    ck_assert_uint_eq(s->img.stride, img->stride);
}

/* rows_match: rows [Y0, Y1) of S, read through SCRATCH (room for them),
 * are those of IMG; the status otherwise.  Allocates nothing, so that a
 * guard may jump out of it. */
static sp_status rows_match(struct sp_source *s, const struct sp_image *img,
                            size_t y0, size_t y1, unsigned char *scratch)
{
    struct sp_image band;
    sp_status st = sp_source_rows(s, y0, y1, scratch, &band);

    if (st == SP_OK) {
        ck_assert_uint_eq(band.height, y1 - y0);
        ck_assert_int_eq(band.backing, SP_BACKING_NONE);
        for (size_t y = y0; y < y1; y++)
            ck_assert_msg(memcmp(band.pixels + (y - y0) * band.stride,
                                 img->pixels + y * img->stride,
                                 img->stride) == 0,
                          "row %zu of [%zu, %zu)", y, y0, y1);
    }
    return st;
}

/* new_scratch: room for ROWS rows of S. */
static unsigned char *new_scratch(struct sp_source *s, size_t rows)
{
    size_t need = sp_source_scratch(s, rows);
    unsigned char *scratch = malloc(need ? need : 1);

    ck_assert_ptr_nonnull(scratch);
    return scratch;
}

/* same_rows: rows_match with a scratch of its own. */
static sp_status same_rows(struct sp_source *s, const struct sp_image *img,
                           size_t y0, size_t y1)
{
    unsigned char *scratch = new_scratch(s, y1 - y0);
    sp_status st = rows_match(s, img, y0, y1, scratch);

    free(scratch);
    return st;
}

static const struct {
    size_t y0, y1;
} ranges[] = {{0, 1}, {0, 29}, {28, 29}, {5, 9}, {13, 14}, {2, 27}};

/* Every range gives the image's rows, through EINTR and short reads. */
START_TEST(test_rows)
{
    enum sp_io io = fx_io[_i];
    struct sp_image img;
    struct sp_source s;

    fx_make_image(&img, 37, 29, 3, 1, 255, 3);
    jerky();
    open_source(&s, &img, io);
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        ck_assert_int_eq(same_rows(&s, &img, ranges[i].y0, ranges[i].y1),
                         SP_OK);
    sp_sys_reset();
    ck_assert_int_eq(sp_source_check(&s), SP_OK);
    ck_assert_int_eq(sp_source_release(&s), SP_OK);
    ck_assert_int_eq(sp_source_release(&s), SP_OK);
    sp_image_release(&img);

    fx_make_image(&img, 5, 8, 1, 2, 65535, 4);  /* 16-bit gray */
    open_source(&s, &img, io);
    ck_assert_int_eq(same_rows(&s, &img, 1, 7), SP_OK);
    sp_source_release(&s);
    sp_image_release(&img);
}
END_TEST

/* A read that fails is the status, for a source that reads; one whose
 * rows are in memory has nothing to fail. */
START_TEST(test_rows_fail)
{
    enum sp_io io = fx_io[_i];
    struct sp_image img;
    struct sp_source s;
    sp_status st;

    fx_make_image(&img, 37, 29, 3, 1, 255, 5);
    open_source(&s, &img, io);
    jerky();
    fail_with = EIO;
    st = same_rows(&s, &img, 3, 20);
    sp_sys_reset();
    ck_assert_int_eq(st, io == SP_IO_PREAD ? EIO : SP_OK);
    ck_assert_int_eq(same_rows(&s, &img, 3, 20), SP_OK);
    sp_source_release(&s);
    sp_image_release(&img);
}
END_TEST

struct guarded {
    struct sp_source *s;
    const struct sp_image *img;
    unsigned char *scratch;    /* made outside the guard: it may jump */
};

static sp_status guarded_rows(void *arg)
{
    const struct guarded *g = arg;

    return rows_match(g->s, g->img, g->img->height - 3, g->img->height,
                      g->scratch);
}

/* A file cut short after the load: the last rows are SP_E_CHANGED where
 * they are still read from the file (pread; mmap, whose SIGBUS the guard
 * turns into the status), and the check says so; a read input holds its
 * copy. */
START_TEST(test_shrunk)
{
    enum sp_io io = fx_io[_i];
    struct sp_image img;
    struct sp_source s;
    struct guarded g = {&s, &img, NULL};
    int reads_file = io != SP_IO_READ;

    fx_make_image(&img, 2000, 40, 3, 1, 255, 6);  /* 240 KB: many pages */
    open_source(&s, &img, io);
    g.scratch = new_scratch(&s, 3);
    ck_assert_int_eq(truncate(fx_path("in.pnm"), 100), 0);
    ck_assert_int_eq(sp_source_guard(&s, guarded_rows, &g),
                     reads_file ? SP_E_CHANGED : SP_OK);
    free(g.scratch);
    ck_assert_int_eq(sp_source_check(&s),
                     reads_file ? SP_E_CHANGED : SP_OK);
    sp_source_release(&s);
    sp_image_release(&img);
}
END_TEST

/* Rows given back are never the rows still wanted; the release leaves no
 * descriptor and no mapping. */
START_TEST(test_done_before)
{
    enum sp_io io = fx_io[_i];
    struct sp_image img;
    struct sp_source s;
    int fds = fx_count_fds();

    fx_make_image(&img, 3000, 60, 3, 1, 255, 7);  /* 540 KB */
    open_source(&s, &img, io);
    for (size_t y = 0; y < 60; y += 7) {
        sp_source_done_before(&s, y);
        ck_assert_int_eq(same_rows(&s, &img, y, y + 1 < 60 ? y + 1 : 60),
                         SP_OK);
    }
    sp_source_done_before(&s, 60);
    ck_assert_int_eq(sp_source_release(&s), SP_OK);
    ck_assert_int_eq(fx_count_maps("in.pnm"), 0);
    sp_input_close(&input);  /* the descriptor is the input's */
    ck_assert_int_eq(fx_count_fds(), fds);
    sp_image_release(&img);
}
END_TEST

/* ---- the mmap backend's page release ---- */

#define MAX_ADVICE 64

static struct {
    size_t n;
    unsigned char *addr[MAX_ADVICE];
    size_t size[MAX_ADVICE];
    int unmaps;
    void *unmap_addr;
    size_t unmap_len;
} seen;

static int recording_madvise(void *addr, size_t len, int advice)
{
    ck_assert_int_eq(advice, MADV_DONTNEED);
    if (seen.n < MAX_ADVICE) {
        seen.addr[seen.n] = addr;
        seen.size[seen.n] = len;
    }
    seen.n++;
    return madvise(addr, len, advice);
}

static int recording_munmap(void *addr, size_t len)
{
    seen.unmaps++;
    seen.unmap_addr = addr;
    seen.unmap_len = len;
    return munmap(addr, len);
}

/* held_by: INPUT holding IMG's view by PATH, as P (LEN bytes): no file
 * (fd -1). */
static void held_by(const struct sp_input_path *path,
                    const struct sp_image *img, void *p, size_t len)
{
    input = (struct sp_input){.fd = -1, .img = *img, .path = path};
    input.img.backing = SP_BACKING_NONE;
    input.held.p = p;
    input.held.len = len;
}

/* mapped: S over LEN bytes at BASE that look mapped (INPUT holds them by
 * the mmap path, with no file), rows of STRIDE bytes from OFF, pages given
 * back in GRAIN blocks. */
static void mapped(struct sp_source *s, unsigned char *base, size_t len,
                   size_t off, size_t stride, size_t grain)
{
    struct sp_image img = {
        .pixels = base + off, .width = stride, .height = (len - off) / stride,
        .stride = stride, .channels = 1, .sample_size = 1, .maxval = 255};

    held_by(&sp_input_mmap, &img, base, len);
    sp_source_open(s, &input, grain);
}

/* Done with rows before Y: a page-aligned range from what was given back
 * before to the last whole page before row Y; nothing when that does not
 * advance; never past the mapping's last whole page.  The release gives
 * back the rest and unmaps exactly base/base_len.  The memory backend
 * never calls. */
START_TEST(test_mmap_done_before)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = 10 * page + 123, off = 15, stride = 1000;
    struct sp_source s;
    struct sp_image img;
    unsigned char *base;
    static const struct {
        size_t rows, end;   /* end: the bytes given back after it */
    } steps[] = {
        {0, 0}, {1, 0}, {4, 0},       /* before the first page ends */
        {5, 4096}, {4, 4096},         /* 5015 bytes: one page; back: none */
        {9, 8192}, {9, 8192}, {12, 8192}, {13, 12288},
        {41, 40960},                  /* the last row: 41015 */
        {1000, 40960},                /* past the end: whole pages only */
    };

    if (page != 4096)  /* the steps are worked for 4 KiB pages */
        stride = page / 4 - 24;
    base = mmap(NULL, len, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(base != MAP_FAILED);
    mapped(&s, base, len, off, stride, page);
    memset(&seen, 0, sizeof seen);
    sp_sys.madvise = recording_madvise;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        size_t before = seen.n, from = s.in->held.done;
        size_t end = off + steps[i].rows * stride;

        end = end > len ? len : end;
        end -= end % page;
        end = end > from ? end : from;
        ck_assert(page != 4096 || end == steps[i].end);
        sp_source_done_before(&s, steps[i].rows);
        ck_assert_msg(s.in->held.done == end,
                      "rows %zu: dropped %zu, want "
                      "%zu", steps[i].rows, s.in->held.done, end);
        if (end == from) {
            ck_assert_msg(seen.n == before, "rows %zu: a call that gives "
                          "back nothing new", steps[i].rows);
        } else {
            ck_assert_uint_eq(seen.n, before + 1);
            ck_assert_ptr_eq(seen.addr[before], base + from);
            ck_assert_uint_eq(seen.size[before], end - from);
        }
    }
    sp_sys.munmap = recording_munmap;
    ck_assert_int_eq(sp_source_release(&s), SP_OK);
    sp_sys_reset();
    /* The release: the rest, from where the drops ended, to the end. */
    ck_assert_ptr_eq(seen.addr[seen.n - 1], base + 10 * page);
    ck_assert_uint_eq(seen.size[seen.n - 1], len - 10 * page);
    ck_assert_int_eq(seen.unmaps, 1);
    ck_assert_ptr_eq(seen.unmap_addr, base);
    ck_assert_uint_eq(seen.unmap_len, len);

    memset(&seen, 0, sizeof seen);
    sp_sys.madvise = recording_madvise;
    fx_make_image(&img, 500, 100, 3, 1, 255, 1);
    held_by(&sp_input_read, &img, img.base, img.base_len);  /* in memory */
    sp_source_open(&s, &input, page);
    sp_source_done_before(&s, 50);
    sp_source_done_before(&s, 100);
    ck_assert_uint_eq(s.in->held.done, 0);
    sp_source_release(&s);
    sp_sys_reset();
    ck_assert_uint_eq(seen.n, 0);
}
END_TEST

/* A grain of 8 pages: what is given back ends on a multiple of 8 pages of
 * address, and nothing is given back until a whole block is passed. */
START_TEST(test_mmap_grain)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), grain = 8 * page;
    size_t len = 40 * page + 5;
    unsigned char *map, *base;
    struct sp_source s;
    static const struct {
        size_t rows, dropped;   /* in pages */
    } steps[] = {{7, 0}, {8, 8}, {15, 8}, {17, 16}, {39, 32}, {1000, 40}};

    map = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(map != MAP_FAILED);
    base = (unsigned char *)(((uintptr_t)map + grain - 1) &
                             ~(uintptr_t)(grain - 1));
    mapped(&s, base, len, 0, page, grain);  /* a row a page */
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        sp_source_done_before(&s, steps[i].rows);
        ck_assert_msg(s.in->held.done == steps[i].dropped * page,
                      "rows %zu: "
                      "dropped %zu pages, want %zu", steps[i].rows,
                      s.in->held.done / page, steps[i].dropped);
    }
    munmap(map, 64 * page);
}
END_TEST

static Suite *source_suite(void)
{
    Suite *s = suite_create("source");
    TCase *tc = fx_tcase("contract");
    int n = (int)FX_NIO;  /* a backend by each load path of fx_io */

    tcase_add_loop_test(tc, test_rows, 0, n);
    tcase_add_loop_test(tc, test_rows_fail, 0, n);
    tcase_add_loop_test(tc, test_shrunk, 0, n);
    tcase_add_loop_test(tc, test_done_before, 0, n);
    suite_add_tcase(s, tc);
    tc = fx_tcase("mmap");
    tcase_add_test(tc, test_mmap_done_before);
    tcase_add_test(tc, test_mmap_grain);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(source_suite());
}
