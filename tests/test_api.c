/* The public API (scaleppm.h) from a caller's side: one image scaled
 * through every kind of input (path, descriptor, memory) into every kind
 * of output (path, descriptor, memory, callback) gives the same bytes;
 * the format is the job's field, not a path's extension; statuses are 0
 * or negative, an errno negated, and a failed run leaves a message
 * naming the file and no memory output; a handle runs again; the steps
 * (decode, scale, encode) taken one at a time through an image give the
 * bytes of a run, and one decode is scaled to several sizes. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "fixtures.h"
#include "scaleppm.h"

/* The input, a 37 x 23 PPM in IN.ppm, and its bytes. */
static unsigned char *in_bytes;
static size_t in_len;

static void make_input(void)
{
    struct sp_image img;

    fx_make_image(&img, 37, 23, 3, 1, 255, 7);
    fx_write_image(fx_path("in.ppm"), &img);
    sp_image_release(&img);
    in_bytes = fx_read_file(fx_path("in.ppm"), &in_len);
}

/* new_job: a job reducing 3 times into FORMAT. */
static sp_job *new_job(const char *format)
{
    sp_job *job;

    ck_assert_int_eq(sp_job_new(&job), 0);
    ck_assert_int_eq(sp_job_set_factor(job, -3), 0);
    ck_assert_int_eq(sp_job_set_format(job, format), 0);
    return job;
}

/* run_ok: run JOB, which must succeed with an empty message. */
static void run_ok(sp_job *job)
{
    int st = sp_job_run(job);

    ck_assert_msg(st == 0, "sp_job_run: %d %s", st, sp_job_message(job));
    ck_assert_str_eq(sp_job_message(job), "");
}

/* The reference: a path into a path. */
static unsigned char *reference(const char *format, size_t *len)
{
    sp_job *job = new_job(format);

    ck_assert_int_eq(sp_job_set_input_path(job, fx_path("in.ppm")), 0);
    /* the extension says PPM; the field says FORMAT */
    ck_assert_int_eq(sp_job_set_output_path(job, fx_path("ref.ppm")), 0);
    run_ok(job);
    sp_job_free(job);
    return fx_read_file(fx_path("ref.ppm"), len);
}

struct collected {
    unsigned char buf[1 << 16];
    size_t len;
    int calls;
};

static int collect(void *arg, const void *data, size_t size)
{
    struct collected *c = arg;

    ck_assert_uint_le(size, sizeof c->buf - c->len);
    memcpy(c->buf + c->len, data, size);
    c->len += size;
    c->calls++;
    return 0;
}

static int refuse(void *arg, const void *data, size_t size)
{
    (void)arg, (void)data, (void)size;
    return -EIO;
}

START_TEST(test_every_input_into_every_output)
{
    static const char *const formats[] = {"pnm", "PNG", "jpeg", "bmp"};
    const char *format = formats[_i];
    size_t ref_len, len;
    unsigned char *ref;
    const void *mem;

    make_input();
    ref = reference(format, &ref_len);
    for (int in = 0; in < 3; in++) {
        for (int out = 0; out < 4; out++) {
            sp_job *job = new_job(format);
            struct collected c = {.len = 0};
            int in_fd = -1, out_fd = -1;
            unsigned char *got = NULL;

            if (in == 0) {
                ck_assert_int_eq(sp_job_set_input_path(job,
                                 fx_path("in.ppm")), 0);
            } else if (in == 1) {
                in_fd = open(fx_path("in.ppm"), O_RDONLY);
                ck_assert_int_ge(in_fd, 0);
                ck_assert_int_eq(sp_job_set_input_fd(job, in_fd), 0);
            } else {
                ck_assert_int_eq(sp_job_set_input_memory(job, in_bytes,
                                 in_len), 0);
            }
            if (out == 0) {
                ck_assert_int_eq(sp_job_set_output_path(job,
                                 fx_path("out.x")), 0);
            } else if (out == 1) {
                out_fd = open(fx_path("out.fd"),
                              O_WRONLY | O_CREAT | O_TRUNC, 0644);
                ck_assert_int_ge(out_fd, 0);
                ck_assert_int_eq(sp_job_set_output_fd(job, out_fd), 0);
            } else if (out == 2) {
                ck_assert_int_eq(sp_job_set_output_memory(job), 0);
            } else {
                ck_assert_int_eq(sp_job_set_output_callback(job, collect,
                                 &c), 0);
            }
            run_ok(job);
            if (out == 0) {
                got = fx_read_file(fx_path("out.x"), &len);
            } else if (out == 1) {
                /* the descriptor is the caller's: still open */
                ck_assert_int_eq(close(out_fd), 0);
                got = fx_read_file(fx_path("out.fd"), &len);
            } else if (out == 2) {
                ck_assert_int_eq(sp_job_output(job, &mem, &len), 0);
                got = malloc(len);
                memcpy(got, mem, len);
            } else {
                ck_assert_int_gt(c.calls, 0);
                len = c.len;
                got = malloc(len);
                memcpy(got, c.buf, len);
            }
            ck_assert_msg(len == ref_len && memcmp(got, ref, len) == 0,
                          "%s: input %d into output %d: %zu bytes, the "
                          "reference %zu", format, in, out, len, ref_len);
            if (in_fd >= 0)
                ck_assert_int_eq(close(in_fd), 0);
            free(got);
            sp_job_free(job);
        }
    }
    free(ref);
    free(in_bytes);
}
END_TEST

/* A run again with another factor replaces the memory output. */
START_TEST(test_run_again)
{
    sp_job *job = new_job("ppm");
    const void *mem;
    size_t len, first;

    make_input();
    ck_assert_int_eq(sp_job_set_input_memory(job, in_bytes, in_len), 0);
    ck_assert_int_eq(sp_job_output(job, &mem, &len), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_output_memory(job), 0);
    ck_assert_int_eq(sp_job_output(job, &mem, &len), SP_E_USAGE);
    ck_assert_ptr_null(mem);
    run_ok(job);
    ck_assert_int_eq(sp_job_output(job, &mem, &len), 0);
    first = len;
    ck_assert_int_eq(sp_job_set_factor(job, 2), 0);
    run_ok(job);
    ck_assert_int_eq(sp_job_output(job, &mem, &len), 0);
    ck_assert_uint_gt(len, first);
    ck_assert_int_eq(memcmp(mem, "P6\n74 46\n255\n", 13), 0);
    sp_job_free(job);
    free(in_bytes);
}
END_TEST

/* Failures: negative statuses, one line naming the file. */
START_TEST(test_failures)
{
    sp_job *job = new_job("png");
    const void *mem;
    size_t len;
    int st;

    ck_assert_int_eq(sp_job_run(job), SP_E_USAGE);  /* no input */
    ck_assert_str_eq(sp_job_message(job), "scaleppm: no input");
    ck_assert_int_eq(sp_job_set_input_path(job, fx_path("none.ppm")), 0);
    ck_assert_int_eq(sp_job_set_output_memory(job), 0);
    ck_assert_int_eq(sp_job_run(job), -ENOENT);
    ck_assert_msg(strstr(sp_job_message(job), "none.ppm: ") != NULL &&
                  strstr(sp_job_message(job), strerror(ENOENT)) != NULL,
                  "%s", sp_job_message(job));
    ck_assert_int_eq(sp_job_output(job, &mem, &len), SP_E_USAGE);

    /* a cut input: a code of the band */
    make_input();
    ck_assert_int_eq(sp_job_set_input_memory(job, in_bytes, in_len / 2),
                     0);
    st = sp_job_run(job);
    ck_assert_int_eq(st, SP_E_TRUNCATED);
    ck_assert_str_eq(sp_strerror(st), "file is truncated");
    ck_assert_msg(strncmp(sp_job_message(job), "memory: file is truncated",
                          25) == 0, "%s", sp_job_message(job));

    /* a callback's failure is the run's */
    ck_assert_int_eq(sp_job_set_input_memory(job, in_bytes, in_len), 0);
    ck_assert_int_eq(sp_job_set_output_callback(job, refuse, NULL), 0);
    ck_assert_int_eq(sp_job_run(job), -EIO);
    ck_assert_msg(strncmp(sp_job_message(job), "callback: ", 10) == 0,
                  "%s", sp_job_message(job));
    sp_job_free(job);
    free(in_bytes);
}
END_TEST

/* A pipe with no reader: -EPIPE where SIGPIPE is ignored. */
START_TEST(test_broken_pipe)
{
    sp_job *job = new_job("pnm");
    int p[2];

    make_input();
    ck_assert_ptr_ne(signal(SIGPIPE, SIG_IGN), SIG_ERR);
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(close(p[0]), 0);
    ck_assert_int_eq(sp_job_set_input_memory(job, in_bytes, in_len), 0);
    ck_assert_int_eq(sp_job_set_output_fd(job, p[1]), 0);
    ck_assert_int_eq(sp_job_run(job), -EPIPE);
    ck_assert_int_eq(close(p[1]), 0);
    sp_job_free(job);
    free(in_bytes);
}
END_TEST

/* The setters refuse what is out of range, and change nothing then. */
START_TEST(test_setters)
{
    sp_job *job;

    ck_assert_int_eq(sp_job_new(&job), 0);
    ck_assert_int_eq(sp_job_set_factor(job, 0), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_factor(job, 65537), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_size(job, 0, 0, 0), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_threads(job, 0), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_threads(job, 1025), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_quality(job, 101), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_filter(job, "lanczos"), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_filter(job, "Box"), 0);
    ck_assert_int_eq(sp_job_set_io(job, "mmap"), 0);
    ck_assert_int_eq(sp_job_set_io(job, "memory"), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_format(job, "gif"), SP_E_OUTFORMAT);
    ck_assert_int_eq(sp_job_set_format(job, "x.png"), SP_E_OUTFORMAT);
    ck_assert_int_eq(sp_job_set_format(job, ""), SP_E_OUTFORMAT);
    ck_assert_int_eq(sp_job_set_format(job, "JPG"), 0);
    ck_assert_int_eq(sp_job_set_input_path(job, NULL), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_input_fd(job, -1), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_input_memory(job, NULL, 1), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_output_fd(job, -1), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_output_callback(job, NULL, NULL),
                     SP_E_USAGE);
    /* the box filter reduces only */
    ck_assert_int_eq(sp_job_set_factor(job, 2), 0);
    ck_assert_int_eq(sp_job_set_input_path(job, "x"), 0);
    ck_assert_int_eq(sp_job_run(job), SP_E_USAGE);
    sp_job_free(job);
    sp_job_free(NULL);
}
END_TEST

/* "-" names a file, not standard input. */
START_TEST(test_dash_is_a_file)
{
    sp_job *job = new_job("pnm");
    const void *mem;
    size_t len;

    make_input();
    ck_assert_int_eq(chdir(fx_dir), 0);
    fx_write_file("-", in_bytes, in_len);
    ck_assert_int_eq(close(STDIN_FILENO), 0);  /* read it and fail */
    ck_assert_int_eq(sp_job_set_input_path(job, "-"), 0);
    ck_assert_int_eq(sp_job_set_output_memory(job), 0);
    run_ok(job);
    ck_assert_int_eq(sp_job_output(job, &mem, &len), 0);
    ck_assert_int_eq(memcmp(mem, "P6\n13 8\n255\n", 12), 0);
    sp_job_free(job);
    free(in_bytes);
}
END_TEST

/* ---- the steps ---- */

/* bytes_of: a copy of JOB's memory output, *LEN its length. */
static unsigned char *bytes_of(const sp_job *job, size_t *len)
{
    const void *mem;
    unsigned char *copy;

    ck_assert_int_eq(sp_job_output(job, &mem, len), 0);
    copy = malloc(*len);
    memcpy(copy, mem, *len);
    return copy;
}

/* run_into: run JOB into memory as FORMAT; its bytes, *LEN long. */
static unsigned char *run_into(sp_job *job, const char *format, size_t *len)
{
    ck_assert_int_eq(sp_job_set_format(job, format), 0);
    ck_assert_int_eq(sp_job_set_output_memory(job), 0);
    run_ok(job);
    return bytes_of(job, len);
}

/* same: A (ALEN bytes) and B (BLEN) are the same bytes; both freed. */
static void same(unsigned char *a, size_t alen, unsigned char *b,
                 size_t blen, const char *what)
{
    ck_assert_msg(alen == blen && memcmp(a, b, alen) == 0,
                  "%s: %zu bytes against %zu", what, alen, blen);
    free(a);
    free(b);
}

/* A JPEG of 256 x 192, in memory, *LEN bytes. */
static unsigned char *make_jpeg(size_t *len)
{
    struct sp_image img;
    unsigned char *ppm, *jpeg;
    size_t ppm_len;
    sp_job *job;

    fx_make_image(&img, 256, 192, 3, 1, 255, 11);
    fx_write_image(fx_path("big.ppm"), &img);
    sp_image_release(&img);
    ppm = fx_read_file(fx_path("big.ppm"), &ppm_len);
    ck_assert_int_eq(sp_job_new(&job), 0);
    ck_assert_int_eq(sp_job_set_input_memory(job, ppm, ppm_len), 0);
    jpeg = run_into(job, "jpeg", len);
    sp_job_free(job);
    free(ppm);
    return jpeg;
}

/* One decode (every pixel) scaled to three sizes, each through an image
 * and encoded: the bytes of a run from a PPM of the decoded pixels; the
 * decode encoded alone is the run of the JPEG at factor 1; the scale
 * step into an image, then encoded, is the run of both at once. */
START_TEST(test_one_decode_several_sizes)
{
    static const size_t sides[] = {64, 32, 17};
    size_t jpeg_len, ppm_len, w, h, len, ref_len;
    unsigned char *jpeg = make_jpeg(&jpeg_len), *ppm, *got, *ref;
    unsigned channels, maxval;
    sp_image *img, *scaled, *none;
    sp_job *job, *from_ppm;
    int bits;

    ck_assert_int_eq(sp_job_new(&job), 0);
    ck_assert_int_eq(sp_job_set_input_memory(job, jpeg, jpeg_len), 0);
    ck_assert_int_eq(sp_job_decode(job, &img), 0);
    sp_image_layout(img, &w, &h, &channels, &maxval, &bits);
    ck_assert_uint_eq(w, 256);
    ck_assert_uint_eq(h, 192);
    ck_assert_uint_eq(channels, 3);
    ck_assert_uint_eq(maxval, 255);
    ck_assert_int_eq(bits, 0);
    ck_assert_ptr_nonnull(sp_image_row(img, 191));
    ck_assert_ptr_null(sp_image_row(img, 192));

    /* encode alone: the decoded pixels as a PPM, which is the run's */
    ck_assert_int_eq(sp_job_set_input_image(job, img), 0);
    ppm = run_into(job, "ppm", &ppm_len);
    ck_assert_int_eq(sp_job_set_input_memory(job, jpeg, jpeg_len), 0);
    ref = run_into(job, "ppm", &ref_len);
    ck_assert_int_eq(memcmp(ref, "P6\n256 192\n255\n", 15), 0);
    same(ppm, ppm_len, ref, ref_len, "decode, encode");
    ppm = run_into(job, "ppm", &ppm_len);

    ck_assert_int_eq(sp_job_new(&from_ppm), 0);
    ck_assert_int_eq(sp_job_set_input_memory(from_ppm, ppm, ppm_len), 0);
    ck_assert_int_eq(sp_job_set_input_image(job, img), 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(sp_job_set_size(job, sides[i], sides[i], 0), 0);
        ck_assert_int_eq(sp_job_set_threads(job, 1 + i), 0);
        got = run_into(job, "png", &len);
        ck_assert_int_eq(sp_job_set_size(from_ppm, sides[i], sides[i], 0),
                         0);
        ref = run_into(from_ppm, "png", &ref_len);
        same(got, len, ref, ref_len, "a size from the image");
    }

    /* scale alone, into an image, then encoded */
    ck_assert_int_eq(sp_job_set_factor(job, -3), 0);
    ck_assert_int_eq(sp_job_set_output_image(job), 0);
    run_ok(job);
    ck_assert_int_eq(sp_job_output_image(job, &scaled), 0);
    ck_assert_int_eq(sp_job_output_image(job, &none), SP_E_USAGE);
    ck_assert_ptr_null(none);
    sp_image_layout(scaled, &w, &h, NULL, NULL, NULL);
    ck_assert_uint_eq(w, 86);  /* a partial block at the edge counts */
    ck_assert_uint_eq(h, 64);
    ck_assert_int_eq(sp_job_set_input_image(job, scaled), 0);
    ck_assert_int_eq(sp_job_set_factor(job, 1), 0);
    got = run_into(job, "png", &len);
    ck_assert_int_eq(sp_job_set_factor(from_ppm, -3), 0);
    ref = run_into(from_ppm, "png", &ref_len);
    same(got, len, ref, ref_len, "scaled into an image, then encoded");

    sp_image_free(scaled);
    sp_image_free(img);
    sp_job_free(from_ppm);
    sp_job_free(job);
    free(ppm);
    free(jpeg);
}
END_TEST

/* A decode hinted by a size is shrunk on load, and the size from it is
 * the run's from the JPEG; a failed decode gives no image and says
 * why. */
START_TEST(test_decode_hint)
{
    size_t jpeg_len, w, h, len, ref_len;
    unsigned char *jpeg = make_jpeg(&jpeg_len), *got, *ref;
    sp_image *img;
    sp_job *job;

    ck_assert_int_eq(sp_job_new(&job), 0);
    ck_assert_int_eq(sp_job_set_input_memory(job, jpeg, jpeg_len), 0);
    ck_assert_int_eq(sp_job_set_size(job, 40, 40, 0), 0);
    ck_assert_int_eq(sp_job_decode(job, &img), 0);
    /* twice the box at least: 1/2 of 256 x 192 */
    sp_image_layout(img, &w, &h, NULL, NULL, NULL);
    ck_assert_uint_eq(w, 128);
    ck_assert_uint_eq(h, 96);
    ref = run_into(job, "png", &ref_len);
    ck_assert_int_eq(sp_job_set_input_image(job, img), 0);
    got = run_into(job, "png", &len);
    same(got, len, ref, ref_len, "the hinted size from the image");
    sp_image_free(img);

    ck_assert_int_eq(sp_job_set_input_memory(job, jpeg, jpeg_len / 3), 0);
    ck_assert_int_lt(sp_job_decode(job, &img), 0);
    ck_assert_ptr_null(img);
    ck_assert_msg(strncmp(sp_job_message(job), "memory: ", 8) == 0, "%s",
                  sp_job_message(job));
    ck_assert_int_eq(sp_job_set_input_image(job, NULL), SP_E_USAGE);
    sp_job_free(job);
    free(jpeg);
}
END_TEST

/* Every key by name, as the command line and the server take it: the
 * same bytes as the setters; a refusal says why and changes nothing. */
START_TEST(test_options)
{
    sp_job *a, *b;
    size_t alen, blen;
    unsigned char *x, *y;

    make_input();
    ck_assert_int_eq(sp_job_new(&a), 0);
    ck_assert_int_eq(sp_job_new(&b), 0);
    ck_assert_int_eq(sp_job_set_input_memory(a, in_bytes, in_len), 0);
    ck_assert_int_eq(sp_job_set_input_memory(b, in_bytes, in_len), 0);
    ck_assert_int_eq(sp_job_set_size(a, 20, 20, 0), 0);
    ck_assert_int_eq(sp_job_set_quality(a, 70), 0);
    x = run_into(a, "jpeg", &alen);
    ck_assert_int_eq(sp_job_set_option(b, "scale", "-2"), 0);
    ck_assert_int_eq(sp_job_set_option(b, "fit", "20x20"), 0);  /* last */
    ck_assert_int_eq(sp_job_set_option(b, "quality", "70"), 0);
    ck_assert_int_eq(sp_job_set_option(b, "format", "jpg"), 0);
    ck_assert_int_eq(sp_job_set_output_memory(b), 0);
    run_ok(b);
    y = bytes_of(b, &blen);
    same(x, alen, y, blen, "set_option against the setters");

    ck_assert_int_eq(sp_job_set_option(b, "quality", "101"), SP_E_USAGE);
    ck_assert_msg(strstr(sp_job_message(b), "expected 1 to 100") != NULL,
                  "%s", sp_job_message(b));
    ck_assert_int_eq(sp_job_set_option(b, "nonesuch", "1"), SP_E_USAGE);
    ck_assert_msg(strstr(sp_job_message(b), "unknown key") != NULL, "%s",
                  sp_job_message(b));
    ck_assert_int_eq(sp_job_set_option(b, NULL, "1"), SP_E_USAGE);
    ck_assert_int_eq(sp_job_set_option(b, "enlarge", NULL), 0);
    ck_assert_int_eq(sp_job_set_option(b, "background", "ff0000"), 0);
    ck_assert_int_eq(sp_job_set_option(b, "orient", "none"), 0);
    /* the refusals changed nothing: still the same bytes */
    ck_assert_int_eq(sp_job_set_option(b, "enlarge", "x"), SP_E_USAGE);
    run_ok(b);
    y = bytes_of(b, &blen);
    x = run_into(a, "jpeg", &alen);
    same(x, alen, y, blen, "after refusals");
    sp_job_free(a);
    sp_job_free(b);
    free(in_bytes);
}
END_TEST

START_TEST(test_version_and_init)
{
    char want[32];

    snprintf(want, sizeof want, "%d.%d.%d", SP_VERSION_MAJOR,
             SP_VERSION_MINOR, SP_VERSION_PATCH);
    ck_assert_str_eq(sp_version(), want);
    ck_assert_int_eq(sp_init(), 0);
    ck_assert_int_eq(sp_init(), 0);
}
END_TEST

static Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = fx_tcase("api");

    tcase_add_loop_test(tc, test_every_input_into_every_output, 0, 4);
    tcase_add_test(tc, test_run_again);
    tcase_add_test(tc, test_failures);
    tcase_add_test(tc, test_broken_pipe);
    tcase_add_test(tc, test_setters);
    tcase_add_test(tc, test_dash_is_a_file);
    tcase_add_test(tc, test_one_decode_several_sizes);
    tcase_add_test(tc, test_decode_hint);
    tcase_add_test(tc, test_options);
    tcase_add_test(tc, test_version_and_init);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(api_suite());
}
