#include "fixtures.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init.h"
#include "source.h"

char fx_dir[PATH_MAX];
static char root[PATH_MAX];

void fx_setup(void)
{
    if (root[0] == '\0' ||
        snprintf(fx_dir, sizeof fx_dir, "%s/t.XXXXXX", root) >=
            (int)sizeof fx_dir ||
        mkdtemp(fx_dir) == NULL)
        ck_abort_msg("mkdtemp under '%s': %s", root, strerror(errno));
}

void fx_teardown(void)
{
    fx_rmtree(fx_dir);
    fx_dir[0] = '\0';
}

int fx_run(Suite *s)
{
    if (sp_lib_init() != SP_OK) {  /* what every program of the library asks */
        fprintf(stderr, "sp_init failed\n");
        return EXIT_FAILURE;
    }
    return fx_run_bare(s);
}

int fx_run_bare(Suite *s)
{
    const char *tmp = getenv("TMPDIR");
    SRunner *sr;
    int failed;

    snprintf(root, sizeof root, "%s/scaleppm-test.XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(root) == NULL) {
        fprintf(stderr, "mkdtemp %s: %s\n", root, strerror(errno));
        return EXIT_FAILURE;
    }
    sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    fx_rmtree(root);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

TCase *fx_tcase(const char *name)
{
    TCase *tc = tcase_create(name);

    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 60);
    return tc;
}

const char *fx_path(const char *name)
{
    /* Kept for the life of the test process: the same name gives the same
     * pointer, so a test may hold on to as many paths as it likes. */
    static char *paths[512];
    static size_t n;
    char buf[PATH_MAX];

    if (snprintf(buf, sizeof buf, "%s/%s", fx_dir, name) >= (int)sizeof buf)
        ck_abort_msg("fx_path: '%s' is too long", name);
    for (size_t i = 0; i < n; i++)
        if (strcmp(paths[i], buf) == 0)
            return paths[i];
    if (n == sizeof paths / sizeof paths[0])
        ck_abort_msg("fx_path: too many paths");
    paths[n] = strdup(buf);
    ck_assert_ptr_nonnull(paths[n]);
    return paths[n++];
}

void fx_rmtree(const char *dir)
{
    DIR *d;
    struct dirent *e;

    if (dir == NULL || dir[0] == '\0')
        return;
    d = opendir(dir);
    if (d == NULL) {
        (void)unlink(dir);
        return;
    }
    /* A test may have made a directory read-only: open it up again. */
    (void)chmod(dir, 0700);
    while ((e = readdir(d)) != NULL) {
        char sub[PATH_MAX];
        struct stat sb;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        if (lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode))
            fx_rmtree(sub);
        else
            (void)unlink(sub);
    }
    closedir(d);
    (void)rmdir(dir);
}

void fx_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL)
        ck_abort_msg("fopen %s: %s", path, strerror(errno));
    if ((len > 0 && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
        ck_abort_msg("write %s: %s", path, strerror(errno));
}

void fx_write_text(const char *path, const char *text)
{
    fx_write_file(path, text, strlen(text));
}

void fx_write_pnm(const char *path, const char *header, const void *raster,
                  size_t len)
{
    size_t hl = strlen(header);
    unsigned char *buf = malloc(hl + len + 1);

    ck_assert_ptr_nonnull(buf);
    memcpy(buf, header, hl);
    if (len > 0)
        memcpy(buf + hl, raster, len);
    fx_write_file(path, buf, hl + len);
    free(buf);
}

void fx_make_image(struct sp_image *img, size_t w, size_t h,
                   unsigned channels, unsigned bytes, unsigned maxval,
                   unsigned seed)
{
    ck_assert_int_eq(sp_image_alloc(img, w, h, channels, bytes, maxval),
                     SP_OK);
    for (size_t y = 0; y < h; y++) {
        for (size_t x = 0; x < w; x++) {
            for (unsigned c = 0; c < channels; c++) {
                uint32_t v = (uint32_t)(x * 73856093u) ^
                             (uint32_t)(y * 19349663u) ^
                             (c + 1) * 83492791u ^ (seed + 1) * 2654435761u;
                v ^= v >> 13;
                v *= 0x5bd1e995u;
                v ^= v >> 15;
                fx_set_sample(img, x, y, c, v % (maxval + 1));
            }
        }
    }
    /* Make sure both ends of the range are there. */
    fx_set_sample(img, 0, 0, 0, 0);
    fx_set_sample(img, w - 1, h - 1, channels - 1, maxval);
}

unsigned fx_sample(const struct sp_image *img, size_t x, size_t y,
                   unsigned c)
{
    const unsigned char *p = img->pixels + y * img->stride +
                             (x * img->channels + c) * img->sample_size;

    return img->sample_size == 2 ? (unsigned)p[0] << 8 | p[1] : p[0];
}

void fx_set_sample(struct sp_image *img, size_t x, size_t y, unsigned c,
                   unsigned v)
{
    unsigned char *p = img->pixels + y * img->stride +
                       (x * img->channels + c) * img->sample_size;

    if (img->sample_size == 2)
        *p++ = (unsigned char)(v >> 8);
    *p = (unsigned char)v;
}

unsigned char *fx_pnm_bytes(const struct sp_image *img, size_t *len)
{
    char hdr[64];
    size_t row = img->width * img->channels * img->sample_size;
    int hl = snprintf(hdr, sizeof hdr, "P%c\n%zu %zu\n%u\n",
                      img->channels == 3 ? '6' : '5', img->width,
                      img->height, img->maxval);
    unsigned char *buf = malloc((size_t)hl + row * img->height + 1);

    ck_assert_ptr_nonnull(buf);
    memcpy(buf, hdr, (size_t)hl);
    for (size_t y = 0; y < img->height; y++)
        memcpy(buf + hl + y * row, img->pixels + y * img->stride, row);
    *len = (size_t)hl + row * img->height;
    return buf;
}

void fx_write_image(const char *path, const struct sp_image *img)
{
    size_t len;
    unsigned char *buf = fx_pnm_bytes(img, &len);

    fx_write_file(path, buf, len);
    free(buf);
}

unsigned char *fx_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 4096, used = 0, n;
    unsigned char *buf = malloc(cap + 1);

    if (f == NULL)
        ck_abort_msg("fopen %s: %s", path, strerror(errno));
    ck_assert_ptr_nonnull(buf);
    while ((n = fread(buf + used, 1, cap - used, f)) > 0) {
        used += n;
        if (used == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            ck_assert_ptr_nonnull(buf);
        }
    }
    if (ferror(f))
        ck_abort_msg("read %s: %s", path, strerror(errno));
    fclose(f);
    buf[used] = '\0';
    *len = used;
    return buf;
}

int fx_file_exists(const char *path)
{
    struct stat sb;

    return lstat(path, &sb) == 0;
}

int fx_count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        ck_abort_msg("opendir %s: %s", dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (prefix == NULL || strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    }
    closedir(d);
    return n;
}

int fx_count_fds(void)
{
    /* opendir holds one descriptor of its own while we count. */
    return fx_count_entries("/proc/self/fd", NULL) - 1;
}

int fx_count_maps(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096 + PATH_MAX];
    int n = 0;

    if (f == NULL)
        ck_abort_msg("fopen /proc/self/maps: %s", strerror(errno));
    while (fgets(line, sizeof line, f) != NULL)
        if (needle == NULL || strstr(line, needle) != NULL)
            n++;
    fclose(f);
    return n;
}

void fx_limit_as(size_t extra)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    struct rlimit rl;

    if (f == NULL)
        ck_abort_msg("fopen /proc/self/status: %s", strerror(errno));
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
            break;
    fclose(f);
    ck_assert_uint_gt(kb, 0);
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &rl), 0);
    rl.rlim_cur = (rlim_t)(kb * 1024 + extra);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
        rl.rlim_cur = rl.rlim_max;
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
}

void fx_in_memory(struct sp_image *img)
{
    struct sp_source src;
    struct sp_image band, copy;
    unsigned char *scratch;
    size_t row = sp_image_row_bytes(img, img->width);

    if (img->pixels != NULL || img->height == 0)
        return;
    /* a pread image stays its input's (sp_load_checked) */
    ck_assert_int_eq(img->backing, SP_BACKING_OWNED);
    ck_assert_int_eq(sp_image_alloc_like(&copy, img->width, img->height, img),
                     SP_OK);
    sp_source_open(&src, img->owner, 0);
    scratch = malloc(sp_source_scratch(&src, src.img.height) + 1);
    ck_assert_ptr_nonnull(scratch);
    ck_assert_int_eq(sp_source_rows(&src, 0, src.img.height, scratch, &band),
                     SP_OK);
    for (size_t y = 0; y < copy.height; y++)
        memcpy(copy.pixels + y * copy.stride, band.pixels + y * band.stride,
               row);
    free(scratch);
    ck_assert_int_eq(sp_image_release(img), SP_OK);
    *img = copy;
}

/* fx_ref_scale: dst(x, y) = src(x / N, y / N) to enlarge; src(x * N, y * N)
 * or the rounded mean of the block's existing pixels to reduce. */
void fx_ref_scale(const struct sp_image *src, int factor,
                  enum sp_reduce filter, struct sp_image *dst)
{
    size_t n = (size_t)(factor < 0 ? -factor : factor);
    size_t ow = factor > 0 ? src->width * n : (src->width + n - 1) / n;
    size_t oh = factor > 0 ? src->height * n : (src->height + n - 1) / n;

    ck_assert_int_eq(sp_image_alloc(dst, ow, oh, src->channels,
                                    src->sample_size, src->maxval), SP_OK);
    for (size_t y = 0; y < oh; y++) {
        for (size_t x = 0; x < ow; x++) {
            for (unsigned c = 0; c < src->channels; c++) {
                uint64_t sum = 0, count = 0;

                if (factor > 0) {
                    sum = fx_sample(src, x / n, y / n, c);
                    count = 1;
                } else if (filter == SP_REDUCE_SAMPLE) {
                    sum = fx_sample(src, x * n, y * n, c);
                    count = 1;
                } else {
                    for (size_t sy = y * n; sy < (y + 1) * n; sy++)
                        for (size_t sx = x * n; sx < (x + 1) * n; sx++)
                            if (sx < src->width && sy < src->height) {
                                sum += fx_sample(src, sx, sy, c);
                                count++;
                            }
                }
                fx_set_sample(dst, x, y, c,
                              (unsigned)((sum + count / 2) / count));
            }
        }
    }
}
