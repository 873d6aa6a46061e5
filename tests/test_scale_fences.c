/* test_scale_fences.c: the wide loads and stores against inaccessible pages
 * and canaries. */
#include "scale_lib.h"

/* ---- the wide loads and stores: fences ----
 *
 * An arena is a mapping with an inaccessible page on either side.  A
 * buffer is placed in it against the page after (a load or store past its
 * end faults), against the page before, or between canary bytes.  The
 * source raster is placed so too and made read-only (a mapped input is
 * PROT_READ).  A fault names the case it happened in on stderr. */

#define CANARY 64

struct arena {
    unsigned char *map;
    size_t map_len;
    unsigned char *lo, *hi;    /* the accessible bytes: [lo, hi) */
};

enum place { AGAINST_END, AGAINST_START, BETWEEN_CANARIES };

static char where[256];

static void on_fault(int sig)
{
    static const char pre[] = "fault in case: ";
    ssize_t ignored;

    ignored = write(STDERR_FILENO, pre, sizeof pre - 1);
    ignored = write(STDERR_FILENO, where, strnlen(where, sizeof where));
    ignored = write(STDERR_FILENO, "\n", 1);
    (void)ignored;
    signal(sig, SIG_DFL);  /* the access faults again, and kills */
}

static void catch_faults(void)
{
    signal(SIGSEGV, on_fault);
    signal(SIGBUS, on_fault);
}

static void arena_make(struct arena *a, size_t max_len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data = (max_len + 2 * CANARY + page - 1) / page * page;

    a->map_len = data + 2 * page;
    a->map = mmap(NULL, a->map_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(a->map != MAP_FAILED);
    ck_assert_int_eq(mprotect(a->map, page, PROT_NONE), 0);
    ck_assert_int_eq(mprotect(a->map + page + data, page, PROT_NONE), 0);
    a->lo = a->map + page;
    a->hi = a->lo + data;
}

static void arena_free(struct arena *a)
{
    ck_assert_int_eq(munmap(a->map, a->map_len), 0);
}

static unsigned char canary(size_t i)
{
    return (unsigned char)(i * 37 + 11);
}

/* arena_place: a LEN-byte buffer in A placed as P says; with canaries, the
 * CANARY bytes either side are set. */
static unsigned char *arena_place(struct arena *a, size_t len, enum place p)
{
    unsigned char *b;

    ck_assert_uint_le(len + 2 * CANARY, (size_t)(a->hi - a->lo));
    switch (p) {
    case AGAINST_END:
        return a->hi - len;
    case AGAINST_START:
        return a->lo;
    case BETWEEN_CANARIES:
        break;
    }
    b = a->lo + CANARY;
    for (size_t i = 0; i < CANARY; i++) {
        b[-1 - (ptrdiff_t)i] = canary(i);
        b[len + i] = canary(i + 1000);
    }
    return b;
}

/* canaries_intact: the bytes either side of B (placed between canaries)
 * are as arena_place() left them. */
static int canaries_intact(const unsigned char *b, size_t len)
{
    for (size_t i = 0; i < CANARY; i++)
        if (b[-1 - (ptrdiff_t)i] != canary(i) ||
            b[len + i] != canary(i + 1000))
            return 0;
    return 1;
}

/* fenced_source: SRC's raster copied into A as P says, read-only, in a
 * view *IMG that owns nothing.  Undo with source_writable(). */
static void fenced_source(struct arena *a, const struct sp_image *src,
                          enum place p, struct sp_image *img)
{
    size_t row = src->width * sp_image_pixel_size(src);
    size_t len = row * src->height;
    unsigned char *b = arena_place(a, len, p);

    for (size_t y = 0; y < src->height; y++)
        memcpy(b + y * row, src->pixels + y * src->stride, row);
    *img = *src;
    img->backing = SP_BACKING_NONE;
    img->base = NULL;
    img->base_len = 0;
    img->pixels = b;
    img->stride = row;
    ck_assert_int_eq(mprotect(a->lo, (size_t)(a->hi - a->lo), PROT_READ), 0);
}

static void source_writable(struct arena *a)
{
    ck_assert_int_eq(mprotect(a->lo, (size_t)(a->hi - a->lo),
                              PROT_READ | PROT_WRITE), 0);
}

/* fenced_rows: rows [Y0, Y1) of SRC by FACTOR and FILTER into a buffer of
 * exactly their size placed in OUT as P says: with canaries they are
 * intact, and the rows are WANT's. */
static void fenced_rows(const struct sp_image *src, int factor,
                        enum sp_reduce filter, size_t y0, size_t y1,
                        struct arena *out, enum place p,
                        const struct sp_image *want)
{
    size_t row = want->width * sp_image_pixel_size(want);
    size_t len = row * (y1 - y0);
    unsigned char *b = arena_place(out, len, p);

    if (p != BETWEEN_CANARIES)
        memset(b, 0xa5, len);
    sp_scale_rows(src, factor, filter, y0, y1, b);
    expect(p != BETWEEN_CANARIES || canaries_intact(b, len),
           "%s: rows [%zu, %zu) wrote past their buffer", where, y0, y1);
    expect(memcmp(b, want->pixels + y0 * want->stride, len) == 0,
           "%s: rows [%zu, %zu) differ from the reference", where, y0, y1);
}

/* Every width 1..24, height 1..5, factor 2..9 and -2..-9; _i picks
 * channels 1 or 3, bytes 1 or 2, and the filter.  The source's last byte
 * is the last before an inaccessible page (then its first the first
 * after one), so any read past the raster faults; the output is exactly
 * its size, against an inaccessible page or between canaries; and bands
 * of rows, split in 2, 3 or 4 and one row each, are each filled into an
 * exact buffer of their own (for the stb formats the job's items are
 * neighbours in one image: a store past an item's end would race with
 * the next item's thread). */
START_TEST(test_fenced)
{
    unsigned channels = _i & 1 ? 3 : 1, bytes = _i & 2 ? 2 : 1;
    enum sp_reduce filter = _i & 4 ? SP_REDUCE_BOX : SP_REDUCE_SAMPLE;
    unsigned maxval = bytes == 2 ? 65535 : 255;
    struct arena in, out;

    catch_faults();
    arena_make(&in, 24 * 5 * 6);
    arena_make(&out, 24 * 9 * 5 * 9 * 6);
    for (size_t w = 1; w <= 24; w++) {
        for (size_t h = 1; h <= 5; h++) {
            struct sp_image src;

            fx_make_image(&src, w, h, channels, bytes, maxval,
                          (unsigned)(w * 8 + h));
            for (int k = 0; k < 16; k++) {
                int factor = k < 8 ? k + 2 : 6 - k;  /* 2..9, -2..-9 */
                struct sp_image want, fenced;
                size_t oh;

                fx_ref_scale(&src, factor, filter, &want);
                oh = want.height;
                snprintf(where, sizeof where, "%zux%zu c%u b%u by %d %s", w,
                         h, channels, bytes, factor, sp_filters[filter]->name);

                fenced_source(&in, &src, AGAINST_END, &fenced);
                fenced_rows(&fenced, factor, filter, 0, oh, &out,
                            BETWEEN_CANARIES, &want);
                fenced_rows(&fenced, factor, filter, 0, oh, &out,
                            AGAINST_END, &want);
                source_writable(&in);

                fenced_source(&in, &src, AGAINST_START, &fenced);
                fenced_rows(&fenced, factor, filter, 0, oh, &out,
                            AGAINST_START, &want);
                for (size_t t = 2; t <= 5; t++) {
                    size_t bands = t == 5 ? oh : t;

                    if (bands > oh)
                        continue;
                    for (size_t b = 0; b < bands; b++)
                        fenced_rows(&fenced, factor, filter, oh * b / bands,
                                    oh * (b + 1) / bands, &out,
                                    b % 2 ? BETWEEN_CANARIES : AGAINST_END,
                                    &want);
                }
                source_writable(&in);
                sp_image_release(&want);
            }
            sp_image_release(&src);
        }
    }
    arena_free(&in);
    arena_free(&out);
}
END_TEST

static Suite *scale_fences_suite(void)
{
    Suite *s = suite_create("scale_fences");
    TCase *tc = fx_tcase("fences");
    tcase_add_loop_test(tc, test_fenced, 0, 8);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(scale_fences_suite());
}
