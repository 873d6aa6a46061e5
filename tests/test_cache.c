/* The page-cache helpers: a copy in any block size is byte-exact; the
 * resident count of a freshly written file, and after eviction; errors;
 * no descriptor or mapping is left behind. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cache.h"
#include "fixtures.h"

/* statfs f_type values of file systems whose pages cannot be evicted:
 * the page cache is their only copy (linux/magic.h). */
#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6

/* pattern: LEN bytes that differ from block to block and from their
 * neighbours (so a block copied twice, or skipped, is seen). */
static unsigned char *pattern(size_t len)
{
    unsigned char *p = malloc(len ? len : 1);
    uint32_t x = 2463534242u;

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (unsigned char)(x >> 24);
    }
    return p;
}

static const size_t file_sizes[] = {0, 1, 4097, 300000};
/* 4093 is prime: it divides none of the file sizes. */
static const size_t block_sizes[] = {1, 4096, 1 << 20, 4093};
#define NSIZES (sizeof file_sizes / sizeof file_sizes[0])
#define NBLOCKS (sizeof block_sizes / sizeof block_sizes[0])

/* Every file size in every block size: DST holds exactly SRC's bytes, and
 * a longer DST that was there before is truncated. */
START_TEST(test_copy_exact)
{
    size_t len = file_sizes[(size_t)_i / NBLOCKS];
    size_t block = block_sizes[(size_t)_i % NBLOCKS];
    const char *src = fx_path("src"), *dst = fx_path("dst");
    unsigned char *data = pattern(len), *got, *junk = pattern(400000);
    size_t got_len;
    int fds = fx_count_fds();

    fx_write_file(src, data, len);
    fx_write_file(dst, junk, 400000);
    ck_assert_int_eq(sp_cache_copy(src, dst, block), SP_OK);
    got = fx_read_file(dst, &got_len);
    ck_assert_msg(got_len == len, "file %zu, block %zu: copy has %zu bytes",
                  len, block, got_len);
    ck_assert_msg(len == 0 || memcmp(got, data, len) == 0,
                  "file %zu, block %zu: the copy differs", len, block);
    ck_assert_int_eq(fx_count_fds(), fds);
    free(got);
    free(junk);
    free(data);
}
END_TEST

/* A copy into a new file creates it. */
START_TEST(test_copy_creates)
{
    const char *src = fx_path("src"), *dst = fx_path("new");
    unsigned char *data = pattern(5000), *got;
    size_t got_len;

    fx_write_file(src, data, 5000);
    ck_assert(!fx_file_exists(dst));
    ck_assert_int_eq(sp_cache_copy(src, dst, 4096), SP_OK);
    got = fx_read_file(dst, &got_len);
    ck_assert_uint_eq(got_len, 5000);
    ck_assert_mem_eq(got, data, 5000);
    free(got);
    free(data);
}
END_TEST

START_TEST(test_copy_errors)
{
    const char *src = fx_path("src"), *dst = fx_path("dst");
    int fds = fx_count_fds();

    /* A missing source: ENOENT, and no destination made. */
    ck_assert_int_eq(sp_cache_copy(fx_path("missing"), dst, 4096), ENOENT);
    ck_assert(!fx_file_exists(dst));
    /* Block 0 is a usage error, before anything is opened. */
    fx_write_text(src, "hello");
    ck_assert_int_eq(sp_cache_copy(src, dst, 0), SP_E_USAGE);
    ck_assert(!fx_file_exists(dst));
    /* A destination that cannot be created: its errno. */
    ck_assert_int_eq(sp_cache_copy(src, fx_path("no/such/dir"), 4096),
                     ENOENT);
    ck_assert_int_eq(fx_count_fds(), fds);
}
END_TEST

/* SRC and DST the same file (by name, or by a hard link): opening DST
 * with O_TRUNC would empty SRC before it is read.  Either refuse or copy,
 * but never lose the data. */
START_TEST(test_copy_onto_itself)
{
    const char *src = fx_path("src"), *hard = fx_path("hard");
    unsigned char *data = pattern(5000), *got;
    size_t got_len;
    sp_status st;

    fx_write_file(src, data, 5000);
    ck_assert_int_eq(link(src, hard), 0);
    st = sp_cache_copy(src, src, 4096);
    got = fx_read_file(src, &got_len);
    ck_assert_msg(got_len == 5000 && memcmp(got, data, 5000) == 0,
                  "copy onto itself returned '%s' and left %zu of 5000 bytes",
                  sp_strerror(st), got_len);
    free(got);
    st = sp_cache_copy(src, hard, 4096);
    got = fx_read_file(src, &got_len);
    ck_assert_msg(got_len == 5000 && memcmp(got, data, 5000) == 0,
                  "copy onto a hard link returned '%s' and left %zu of 5000 "
                  "bytes", sp_strerror(st), got_len);
    free(got);
    free(data);
}
END_TEST

/* cache_dir: a directory for the eviction tests, on a file system that
 * has a backing store when one can be found: fx_dir, or else a fresh one
 * under /var/tmp.  *MADE says whether it must be removed afterwards;
 * *EVICTABLE whether eviction can be expected to do anything there. */
static const char *cache_dir(char *buf, size_t size, int *made,
                             int *evictable)
{
    struct statfs sf;

    *made = 0;
    *evictable = 1;
    ck_assert_int_eq(statfs(fx_dir, &sf), 0);
    if (sf.f_type != TMPFS_MAGIC_ && sf.f_type != RAMFS_MAGIC_)
        return fx_dir;
    if ((size_t)snprintf(buf, size, "/var/tmp/scaleppm-cache.XXXXXX") <
            size &&
        mkdtemp(buf) != NULL) {
        ck_assert_int_eq(statfs(buf, &sf), 0);
        *made = 1;
        if (sf.f_type != TMPFS_MAGIC_ && sf.f_type != RAMFS_MAGIC_)
            return buf;
    }
    fprintf(stderr, "test_cache: %s is tmpfs: not checking that eviction "
            "drops pages\n", *made ? buf : fx_dir);
    *evictable = 0;
    return *made ? buf : fx_dir;
}

/* A file just written is in the page cache: all of its ceil(size/page)
 * pages counted, some resident.  After sp_cache_evict() none (or almost
 * none) is, and counting them again does not bring them back. */
START_TEST(test_resident_and_evict)
{
    char dirbuf[PATH_MAX], path[PATH_MAX];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = 256 * page + 123, resident, total, after, total2;
    unsigned char *data = pattern(len);
    int made, evictable, fds, maps;
    const char *dir = cache_dir(dirbuf, sizeof dirbuf, &made, &evictable);

    ck_assert_int_lt(snprintf(path, sizeof path, "%s/cached", dir),
                     (int)sizeof path);
    fx_write_file(path, data, len);
    fds = fx_count_fds();
    maps = fx_count_maps(path);
    ck_assert_int_eq(sp_cache_resident(path, &resident, &total), SP_OK);
    ck_assert_uint_eq(total, (len + page - 1) / page);
    ck_assert_uint_eq(total, 257);
    ck_assert_uint_gt(resident, 0);
    ck_assert_uint_le(resident, total);

    ck_assert_int_eq(sp_cache_evict(path), SP_OK);
    ck_assert_int_eq(sp_cache_resident(path, &after, &total2), SP_OK);
    ck_assert_uint_eq(total2, total);
    if (evictable) {
        ck_assert_msg(after <= total / 8,
                      "%zu of %zu pages resident before eviction, %zu after",
                      resident, total, after);
        /* mincore does not fault pages in: a second look agrees. */
        ck_assert_int_eq(sp_cache_resident(path, &resident, &total2),
                         SP_OK);
        ck_assert_uint_le(resident, after);
    }
    ck_assert_int_eq(fx_count_fds(), fds);
    ck_assert_int_eq(fx_count_maps(path), maps);

    /* Reading it brings it back. */
    free(fx_read_file(path, &len));
    ck_assert_int_eq(sp_cache_resident(path, &resident, &total2), SP_OK);
    if (evictable)
        ck_assert_uint_gt(resident, after);
    else
        ck_assert_uint_gt(resident, 0);

    (void)unlink(path);
    if (made)
        fx_rmtree(dirbuf);
    free(data);
}
END_TEST

/* An empty file has no pages (and cannot be mapped: it must not try). */
START_TEST(test_resident_empty)
{
    const char *path = fx_path("empty");
    size_t resident = 99, total = 99;

    fx_write_file(path, "", 0);
    ck_assert_int_eq(sp_cache_resident(path, &resident, &total), SP_OK);
    ck_assert_uint_eq(resident, 0);
    ck_assert_uint_eq(total, 0);
    ck_assert_int_eq(sp_cache_evict(path), SP_OK);
}
END_TEST

/* One byte: one page. */
START_TEST(test_resident_one_byte)
{
    const char *path = fx_path("one");
    size_t resident, total;

    fx_write_file(path, "x", 1);
    ck_assert_int_eq(sp_cache_resident(path, &resident, &total), SP_OK);
    ck_assert_uint_eq(total, 1);
    ck_assert_uint_eq(resident, 1);
}
END_TEST

START_TEST(test_missing)
{
    size_t resident, total;
    int fds = fx_count_fds();

    ck_assert_int_eq(sp_cache_resident(fx_path("missing"), &resident,
                                       &total), ENOENT);
    ck_assert_int_eq(sp_cache_evict(fx_path("missing")), ENOENT);
    ck_assert_int_eq(fx_count_fds(), fds);
}
END_TEST

static Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = fx_tcase("copy");

    tcase_add_loop_test(tc, test_copy_exact, 0, (int)(NSIZES * NBLOCKS));
    tcase_add_test(tc, test_copy_creates);
    tcase_add_test(tc, test_copy_errors);
    tcase_add_test(tc, test_copy_onto_itself);
    suite_add_tcase(s, tc);

    tc = fx_tcase("resident");
    tcase_add_test(tc, test_resident_and_evict);
    tcase_add_test(tc, test_resident_empty);
    tcase_add_test(tc, test_resident_one_byte);
    tcase_add_test(tc, test_missing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(cache_suite());
}
