/* test_job_chunks.c: chunks of any size give the same bytes (a factor's
 * and a fit's), and a mapped input gives back only the rows it is done
 * with. */
#include "job_lib.h"
#include "resample.h"

/* ---- chunks ---- */

/* minflt_now: this process's minor faults so far. */
static long minflt_now(void)
{
    struct rusage ru;

    ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_minflt;
}

/* run_chunks: JOB with items of CHUNK bytes; the output is WANT's bytes,
 * the threads are clamped, and the phases are sane: each measured, none
 * negative, load and each later phase no longer than the run (scale and
 * write overlap), and together no more faults than the run took. */
static void run_chunks(struct sp_job *job, size_t chunk,
                       const unsigned char *want, size_t want_len,
                       size_t out_height, const char *what)
{
    struct sp_report r;
    uint64_t t0, wall;
    long f0, faults, sum_flt = 0;
    unsigned char *got;
    size_t len;
    sp_status st;

    job->chunk_bytes = chunk;
    f0 = minflt_now();
    t0 = sp_now_ns();
    st = fx_job_run(job, &r);
    wall = sp_now_ns() - t0;
    faults = minflt_now() - f0;
    expect(st == SP_OK, "%s: %s (%s)", what, sp_strerror(st), r.why);
    got = fx_read_file(job->out.path, &len);
    expect(len == want_len && memcmp(got, want, len) == 0,
           "%s: output differs", what);
    free(got);
    expect(r.load.io_used == job->io, "%s: io %d", what, r.load.io_used);
    expect(r.threads_used >= 1 && r.threads_used <= job->threads &&
           r.threads_used <= out_height, "%s: threads_used %u", what,
           r.threads_used);
    for (int i = 0; i < SP_NPHASES; i++) {
        expect(r.phase[i].minflt >= 0 && r.phase[i].majflt >= 0,
               "%s: phase %d faults %ld %ld", what, i, r.phase[i].minflt,
               r.phase[i].majflt);
        sum_flt += r.phase[i].minflt;
    }
    expect(r.phase[SP_LOAD].ns > 0 && r.phase[SP_SCALE].ns > 0 &&
           r.phase[SP_WRITE].ns > 0, "%s: a phase of 0 ns", what);
    expect(r.phase[SP_LOAD].ns + r.phase[SP_SCALE].ns <= wall &&
           r.phase[SP_LOAD].ns + r.phase[SP_RELEASE].ns <= wall &&
           r.phase[SP_LOAD].ns + r.phase[SP_WRITE].ns <= wall, "%s: load %llu, scale "
           "%llu, release %llu, write %llu ns; the run took %llu", what,
           (unsigned long long)r.phase[SP_LOAD].ns,
           (unsigned long long)r.phase[SP_SCALE].ns,
           (unsigned long long)r.phase[SP_RELEASE].ns,
           (unsigned long long)r.phase[SP_WRITE].ns,
           (unsigned long long)wall);
    expect(sum_flt <= faults, "%s: the phases add up to %ld faults, the run "
           "took %ld", what, sum_flt, faults);
}

/* Items of 1 byte (one row a thread), 7 bytes,
 * 1000 bytes and the default, against threads 1, 2, 3 and 10, read and
 * mmap, reduce, copy and enlarge, both filters: the output file is the
 * reference's, byte for byte.  _i picks the input: a 37x23 P6 or a
 * 16-bit 29x31 P5. */
START_TEST(test_chunks)
{
    static const size_t chunks[] = {1, 7, 1000, 0};
    static const unsigned threads[] = {1, 2, 3, 10};
    static const int factors[] = {-7, -4, -3, -2, 1, 2, 3, 5};
    const char *in = fx_path("in.pnm"), *out = fx_path("out.pnm");
    struct sp_image src;

    if (_i == 0)
        fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    else
        fx_make_image(&src, 29, 31, 1, 2, 65535, 2);
    fx_write_image(in, &src);
    for (size_t fi = 0; fi < sizeof factors / sizeof factors[0]; fi++) {
        for (int f = SP_REDUCE_SAMPLE; f <= SP_REDUCE_BOX; f++) {
            struct sp_image want;
            unsigned char *expect_bytes;
            size_t expect_len;

            fx_ref_scale(&src, factors[fi], (enum sp_reduce)f, &want);
            expect_bytes = fx_pnm_bytes(&want, &expect_len);
            for (size_t pi = 0; pi < FX_NIO; pi++) {
                enum sp_io io = fx_io[pi];

                for (size_t t = 0; t < sizeof threads / sizeof threads[0];
                     t++) {
                    for (size_t w = 0; w < sizeof chunks / sizeof chunks[0];
                         w++) {
                        struct sp_job job = {
                            .in = sp_src_path(in), .out = sp_target_path(out), .io = io,
                            .factor = factors[fi],
                            .filter = sp_filters[f],
                            .threads = threads[t]};
                        char what[128];

                        snprintf(what, sizeof what, "by %d %s, %s, %u "
                                 "threads, chunk %zu", factors[fi],
                                 sp_filters[f]->name,
                                 sp_io_name(io), threads[t],
                                 chunks[w]);
                        run_chunks(&job, chunks[w], expect_bytes, expect_len,
                                   want.height, what);
                    }
                }
            }
            free(expect_bytes);
            sp_image_release(&want);
        }
    }
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 2);
    sp_image_release(&src);
}
END_TEST

/* Outputs larger than the default chunk (SP_CHUNK), so that it too is cut
 * in several; and chunks
 * that do not divide the output. */
START_TEST(test_chunks_large)
{
    static const int factors[] = {-3, 2, 5};
    static const unsigned threads[] = {1, 3};
    static const size_t chunks[] = {0, 100000, 333333};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;

    fx_make_image(&src, 301, 203, 3, 1, 255, 5);
    fx_write_image(in, &src);
    for (size_t fi = 0; fi < sizeof factors / sizeof factors[0]; fi++) {
        const struct sp_filter_row *filter = factors[fi] < 0
                                                 ? &sp_filter_box
                                                 : &sp_filter_sample;
        struct sp_image want;
        unsigned char *expect_bytes;
        size_t expect_len;

        fx_ref_scale(&src, factors[fi],
                     factors[fi] < 0 ? SP_REDUCE_BOX : SP_REDUCE_SAMPLE, &want);
        expect_bytes = fx_pnm_bytes(&want, &expect_len);
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];

            for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
                for (size_t w = 0; w < sizeof chunks / sizeof chunks[0];
                     w++) {
                    struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out),
                                         .io = io,
                                         .factor = factors[fi],
                                         .filter = filter,
                                         .threads = threads[t]};
                    char what[128];

                    snprintf(what, sizeof what, "301x203 by %d, %s, %u "
                             "threads, chunk %zu", factors[fi],
                             sp_io_name(io), threads[t],
                             chunks[w]);
                    run_chunks(&job, chunks[w], expect_bytes, expect_len,
                               want.height, what);
                }
            }
        }
        free(expect_bytes);
        sp_image_release(&want);
    }
    sp_image_release(&src);
}
END_TEST

/* fit_reference: SRC resampled whole to OW x OH (resample.h), as the
 * bytes of a PNM file. */
static unsigned char *fit_reference(const struct sp_image *src, size_t ow,
                                    size_t oh, size_t *len)
{
    struct sp_resample r = {src->width, src->height, ow, oh};
    void *scratch = aligned_alloc(16, sp_resample_scratch(src, ow) + 16);
    struct sp_image want;
    unsigned char *bytes;

    ck_assert_ptr_nonnull(scratch);
    ck_assert_int_eq(sp_image_alloc(&want, ow, oh, src->channels,
                                    src->sample_size, src->maxval), SP_OK);
    sp_resample_rows(src, 0, &r, 0, oh, scratch, want.pixels);
    bytes = fx_pnm_bytes(&want, len);
    sp_image_release(&want);
    free(scratch);
    return bytes;
}

/* A fit's items read the fractional spans of source rows they cover and
 * give back (mmap, pages of a page) only the rows no later item reads:
 * items of any size, any threads, every path, reduce and enlarge, give
 * the bytes of the whole image resampled at once. */
START_TEST(test_chunks_fit)
{
    static const size_t boxes[][2] = {{13, 13}, {40, 0}, {0, 5}, {91, 0}};
    static const size_t chunks[] = {1, 100, 0};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;

    fx_make_image(&src, 67, 101, 3, 1, 255, 8);
    fx_write_image(in, &src);
    for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; b++) {
        struct sp_fit fit = {.width = boxes[b][0], .height = boxes[b][1],
                              .enlarge = 1};
        size_t ow, oh, len;
        unsigned char *want;

        sp_fit_size(&fit, src.width, src.height, &ow, &oh);
        want = fit_reference(&src, ow, oh, &len);
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            for (unsigned t = 1; t <= 5; t += 2) {
                for (size_t w = 0; w < sizeof chunks / sizeof chunks[0];
                     w++) {
                    struct sp_job job = {
                        .in = sp_src_path(in), .out = sp_target_path(out), .io = fx_io[pi], .fit = fit,
                        .threads = t,
                        .drop_grain = (size_t)sysconf(_SC_PAGESIZE)};
                    char what[128];

                    snprintf(what, sizeof what, "fit %zux%zu, %s, %u "
                             "threads, chunk %zu", ow, oh,
                             sp_io_name(fx_io[pi]), t, chunks[w]);
                    run_chunks(&job, chunks[w], want, len, oh, what);
                }
            }
        }
        free(want);
    }
    sp_image_release(&src);
}
END_TEST

/* The stb formats take the whole image at once, whatever the chunk: the
 * file is what sp_write() makes of the reference. */
START_TEST(test_chunks_stb)
{
    static const char *const names[] = {"out.png", "out.bmp", "out.tga"};
    const char *in = fx_path("in.ppm"), *ref = fx_path("ref");
    struct sp_image src, want;
    char why[SP_WHY_MAX];

    fx_make_image(&src, 37, 23, 3, 1, 255, 6);
    fx_write_image(in, &src);
    fx_ref_scale(&src, 3, SP_REDUCE_SAMPLE, &want);
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        enum sp_outfmt fmt;
        unsigned char *expect_bytes;
        size_t expect_len;

        ck_assert_int_eq(sp_outfmt_for(names[n], &fmt, NULL), SP_OK);
        ck_assert_int_eq(sp_write(&want, ref, fmt, why), SP_OK);
        expect_bytes = fx_read_file(ref, &expect_len);
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];

            for (unsigned threads = 1; threads <= 4; threads += 3) {
                struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(fx_path(names[n])),
                                     .io = io, .factor = 3,
                                     .threads = threads};
                char what[96];

                snprintf(what, sizeof what, "%s, %s, %u threads", names[n],
                         sp_io_name(io), threads);
                run_chunks(&job, 1, expect_bytes, expect_len, want.height,
                           what);
            }
        }
        free(expect_bytes);
    }
    sp_image_release(&want);
    sp_image_release(&src);
}
END_TEST

/* ---- giving back the rows of a mapped input ----
 *
 * The seam records the input's mapping and every madvise, and makes each
 * range given back inaccessible (PROT_NONE): a row read after it was
 * given back faults, and the fault names the case. */

#define MAX_ADVICE 4096

static struct {
    unsigned char *base;         /* the last mapping made */
    size_t len;
    int maps;
    size_t n;
    unsigned char *addr[MAX_ADVICE];
    size_t size[MAX_ADVICE];
    int advice[MAX_ADVICE];
    int hide;                    /* mprotect what is given back */
} seen;

static char where[160];

static void on_fault(int sig)
{
    static const char pre[] = "fault in case: ";
    static const char post[] = " (a row read after it was given back?)\n";
    ssize_t ignored;

    ignored = write(STDERR_FILENO, pre, sizeof pre - 1);
    ignored = write(STDERR_FILENO, where, strnlen(where, sizeof where));
    ignored = write(STDERR_FILENO, post, sizeof post - 1);
    (void)ignored;
    signal(sig, SIG_DFL);
}

static void *recording_mmap(void *addr, size_t len, int prot, int flags,
                            int fd, off_t off)
{
    void *p = mmap(addr, len, prot, flags, fd, off);

    if (p != MAP_FAILED) {
        seen.base = p;
        seen.len = len;
        seen.maps++;
    }
    return p;
}

static int recording_madvise(void *addr, size_t len, int advice)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    if (seen.n < MAX_ADVICE) {
        seen.addr[seen.n] = addr;
        seen.size[seen.n] = len;
        seen.advice[seen.n] = advice;
    }
    seen.n++;
    if (seen.hide && len > 0 &&
        mprotect(addr, (len + page - 1) / page * page, PROT_NONE) != 0)
        return -1;
    return madvise(addr, len, advice);
}

/* check_advice: the calls seen are MADV_DONTNEED of page-aligned ranges,
 * each starting where the one before ended, from the mapping's base: the
 * drops (all but the last) whole pages, the last (the release) ending at
 * the mapping's end. */
static void check_advice(const char *what)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *at = seen.base;

    expect(seen.maps == 1, "%s: %d mappings", what, seen.maps);
    expect(seen.n >= 1 && seen.n <= MAX_ADVICE, "%s: %zu madvise calls",
           what, seen.n);
    for (size_t i = 0; i < seen.n; i++) {
        expect(seen.advice[i] == MADV_DONTNEED, "%s: call %zu advice %d",
               what, i, seen.advice[i]);
        expect(seen.addr[i] == at, "%s: call %zu at offset %td, want %td",
               what, i, seen.addr[i] - seen.base, at - seen.base);
        expect((size_t)(seen.addr[i] - seen.base) % page == 0,
               "%s: call %zu not page-aligned", what, i);
        if (i + 1 < seen.n)
            expect(seen.size[i] > 0 && seen.size[i] % page == 0,
                   "%s: drop %zu of %zu bytes", what, i, seen.size[i]);
        at += seen.size[i];
    }
    expect(at == seen.base + seen.len, "%s: the calls end at %td of %zu",
           what, at - seen.base, seen.len);
}

/* A mapped input through chunks of every size: only whole pages before
 * the rows still to be read are given back, in order, and the release
 * gives back the rest; the output is still the reference's.  A read
 * (malloc'd) or pread input never calls madvise. */
START_TEST(test_drop_rows_job)
{
    static const int factors[] = {-3, -2, 1, 2, 3};
    static const unsigned threads[] = {1, 3};
    static const size_t chunks[] = {1, 5000, 0};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;

    signal(SIGSEGV, on_fault);
    fx_make_image(&src, 300, 200, 3, 1, 255, 9);  /* 180 KB: 44 pages */
    fx_write_image(in, &src);
    for (size_t fi = 0; fi < sizeof factors / sizeof factors[0]; fi++) {
        for (int f = SP_REDUCE_SAMPLE; f <= SP_REDUCE_BOX; f++) {
            struct sp_image want;
            unsigned char *expect_bytes;
            size_t expect_len;

            fx_ref_scale(&src, factors[fi], (enum sp_reduce)f, &want);
            expect_bytes = fx_pnm_bytes(&want, &expect_len);
            for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
                for (size_t w = 0; w < sizeof chunks / sizeof chunks[0];
                     w++) {
                    for (size_t pi = 0; pi < FX_NIO; pi++) {
                        enum sp_io io = fx_io[pi];
                        struct sp_job job = {
                            .in = sp_src_path(in), .out = sp_target_path(out), .io = io,
                            .factor = factors[fi],
                            .filter = sp_filters[f],
                            .threads = threads[t]};

                        snprintf(where, sizeof where, "by %d %s, %s, %u "
                                 "threads, chunk %zu", factors[fi],
                                 sp_filters[f]->name,
                                 sp_io_name(io), threads[t],
                                 chunks[w]);
                        job.drop_grain = (size_t)sysconf(_SC_PAGESIZE);
                        memset(&seen, 0, sizeof seen);
                        seen.hide = 1;
                        sp_sys.mmap = recording_mmap;
                        sp_sys.madvise = recording_madvise;
                        run_chunks(&job, chunks[w], expect_bytes,
                                   expect_len, want.height, where);
                        sp_sys_reset();
                        if (io != SP_IO_MMAP) {
                            expect(seen.n == 0, "%s: %zu madvise calls",
                                   where, seen.n);
                            continue;
                        }
                        check_advice(where);
                        /* One row an item: the rows are given back as
                         * the items pass, not all at the end. */
                        if (chunks[w] == 1 && threads[t] == 1)
                            expect(seen.n >= 10, "%s: %zu madvise calls",
                                   where, seen.n);
                    }
                }
            }
            free(expect_bytes);
            sp_image_release(&want);
        }
    }
    sp_image_release(&src);
}
END_TEST

static Suite *job_chunks_suite(void)
{
    Suite *s = suite_create("job_chunks");
    TCase *tc = fx_tcase("chunks");
    tcase_add_loop_test(tc, test_chunks, 0, 2);
    tcase_add_test(tc, test_chunks_large);
    tcase_add_test(tc, test_chunks_stb);
    tcase_add_test(tc, test_chunks_fit);
    tcase_add_test(tc, test_drop_rows_job);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(job_chunks_suite());
}
