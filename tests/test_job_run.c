/* test_job_run.c: a whole run, file to file: read, mmap and pread, any
 * thread count, every factor give the reference scaler's bytes; output over
 * input; the report's fields; --io auto. */
#include "job_lib.h"

START_TEST(test_equivalence)
{
    static const unsigned threads[] = {1, 2, 10, 500};
    const char *in = fx_path("in.pnm"), *out = fx_path("out.pnm");
    struct sp_image src;
    struct sp_report r;

    if (_i == 0)
        fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    else
        fx_make_image(&src, 29, 31, 1, 2, 65535, 2);
    fx_write_image(in, &src);
    for (int factor = -8; factor <= 8; factor++) {
        if (factor == 0)
            continue;
        for (int f = SP_REDUCE_SAMPLE; f <= SP_REDUCE_BOX; f++) {
            struct sp_image want;
            unsigned char *expect;
            size_t expect_len;

            fx_ref_scale(&src, factor, (enum sp_reduce)f, &want);
            expect = fx_pnm_bytes(&want, &expect_len);
            for (size_t pi = 0; pi < FX_NIO; pi++) {
                enum sp_io io = fx_io[pi];

                for (size_t t = 0; t < sizeof threads / sizeof threads[0];
                     t++) {
                    unsigned char *got;
                    size_t len;
                    sp_status st = run(in, out, io, factor,
                                       sp_filters[f], threads[t], &r);

                    ck_assert_msg(st == SP_OK, "%s", sp_strerror(st));
                    got = fx_read_file(out, &len);
                    ck_assert_msg(len == expect_len &&
                                  memcmp(got, expect, len) == 0,
                                  "factor %d %s by %s with %u threads: "
                                  "output differs", factor,
                                  sp_filters[f]->name,
                                  sp_io_name(io), threads[t]);
                    free(got);
                    ck_assert_int_eq(r.load.io_used, io);
                    ck_assert_uint_eq(r.out_width, want.width);
                    ck_assert_uint_eq(r.out_height, want.height);
                    ck_assert(r.threads_used >= 1 &&
                              r.threads_used <= threads[t] &&
                              r.threads_used <= want.height);
                }
            }
            free(expect);
            sp_image_release(&want);
        }
    }
    sp_image_release(&src);
}
END_TEST

/* The output may be the input, mapped while it is read. */
START_TEST(test_out_is_in)
{
    static const int factors[] = {2, -2, 3, -3, 1};
    const char *path = fx_path("same.ppm");
    struct sp_image src, want;
    struct sp_report r;

    for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];
            unsigned char *got, *expect;
            size_t len, expect_len;

            fx_make_image(&src, 37, 23, 3, 1, 255, 3);
            fx_write_image(path, &src);
            fx_ref_scale(&src, factors[i], SP_REDUCE_BOX, &want);
            ck_assert_int_eq(run(path, path, io, factors[i],
                                 &sp_filter_box, 4, &r), SP_OK);
            ck_assert_int_eq(r.load.io_used, io);
            got = fx_read_file(path, &len);
            expect = fx_pnm_bytes(&want, &expect_len);
            ck_assert_uint_eq(len, expect_len);
            ck_assert_mem_eq(got, expect, len);
            ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
            free(got);
            free(expect);
            sp_image_release(&want);
            sp_image_release(&src);
        }
    }
}
END_TEST

/* The report: sizes, layout, io path, threads clamped to output rows
 * (a PNM's items; a PNG's do not depend on the threads), the whitespace
 * after the last image. */
START_TEST(test_report_fields)
{
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;
    struct sp_report r;
    unsigned char *data;
    size_t len;

    fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    data = fx_pnm_bytes(&src, &len);
    data = realloc(data, len + 4);
    ck_assert_ptr_nonnull(data);
    memcpy(data + len, "\n \r\n", 4);
    fx_write_file(in, data, len + 4);

    ck_assert_int_eq(run(in, out, SP_IO_MMAP, -4, &sp_filter_sample, 100, &r),
                     SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_MMAP);
    ck_assert_int_eq(r.load.magic, '6');
    ck_assert_uint_eq(r.in_width, 37);
    ck_assert_uint_eq(r.in_height, 23);
    ck_assert_uint_eq(r.out_width, 10);
    ck_assert_uint_eq(r.out_height, 6);
    ck_assert_uint_eq(r.threads_used, 6);
    ck_assert_uint_eq(r.channels, 3);
    ck_assert_uint_eq(r.sample_size, 1);
    ck_assert_uint_eq(r.maxval, 255);
    ck_assert_uint_eq(r.load.trailing_bytes, 4);
    ck_assert_int_eq(r.load.trailing_image, 0);
    ck_assert_uint_eq(r.load.input_bytes, len + 4);
    ck_assert_ptr_null(r.failed_path);
    ck_assert(fx_file_exists(out));

    ck_assert_int_eq(run(in, out, SP_IO_READ, 3, &sp_filter_sample, 10, &r),
                     SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    ck_assert_uint_eq(r.out_width, 111);
    ck_assert_uint_eq(r.out_height, 69);
    /* A thread an item, and an item whole source rows: 69 rows in 10
     * threads' shares of 7, rounded up to 9, make 8 items. */
    ck_assert_uint_eq(r.threads_used, 8);

    /* A plain input is read even when mmap or pread is asked for. */
    fx_write_text(fx_path("p.pgm"), "P2\n3 2\n9\n1 2 3\n4 5 6\n");
    ck_assert_int_eq(run(fx_path("p.pgm"), out, SP_IO_PREAD, 2,
                         &sp_filter_sample, 10, &r), SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    ck_assert_int_eq(run(fx_path("p.pgm"), out, SP_IO_MMAP, 2,
                         &sp_filter_sample, 10, &r), SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    ck_assert_int_eq(r.load.magic, '2');
    ck_assert_uint_eq(r.threads_used, 2);
    ck_assert_uint_eq(r.maxval, 9);

    /* A PNG's items are its deflate's segments, sized by the image alone
     * (plan.h): so small a one is one item, on one thread. */
    ck_assert_int_eq(run(in, fx_path("out.png"), SP_IO_READ, 3,
                         &sp_filter_sample, 10, &r), SP_OK);
    ck_assert_uint_eq(r.threads_used, 1);
    free(data);
    sp_image_release(&src);
}
END_TEST

/* --io auto: a regular binary file is pread, whatever the job (each
 * part of the output reads the rows it needs as it is made); a plain one
 * is read whole. */
START_TEST(test_io_auto)
{
    static const int factors[] = {2, 7, 1, -1, -2, -5};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;
    struct sp_report r;

    fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    fx_write_image(in, &src);
    for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++)
        for (int f = SP_REDUCE_SAMPLE; f <= SP_REDUCE_BOX; f++) {
            ck_assert_int_eq(run(in, out, SP_IO_AUTO, factors[i],
                                 sp_filters[f], 2, &r), SP_OK);
            ck_assert_msg(r.load.io_used == SP_IO_PREAD, "by %d: %s",
                          factors[i], sp_io_name(r.load.io_used));
        }
    fx_write_text(fx_path("p.pgm"), "P2\n3 2\n9\n1 2 3\n4 5 6\n");
    ck_assert_int_eq(run(fx_path("p.pgm"), out, SP_IO_AUTO, 2,
                         &sp_filter_sample, 2, &r), SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    sp_image_release(&src);
}
END_TEST

static Suite *job_run_suite(void)
{
    Suite *s = suite_create("job_run");
    TCase *tc = fx_tcase("run");
    tcase_add_loop_test(tc, test_equivalence, 0, 2);
    tcase_add_test(tc, test_out_is_in);
    tcase_add_test(tc, test_report_fields);
    tcase_add_test(tc, test_io_auto);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(job_run_suite());
}
