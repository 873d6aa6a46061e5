/* test_job_report.c: standard input and output, and the report: printed, as
 * JSON, and its timings. */
#include "job_lib.h"

START_TEST(test_stdin_stdout)
{
    const char *in = fx_path("in.pgm"), *out = fx_path("stdout");
    struct sp_image src, want;
    struct sp_report r;
    unsigned char *data, *got, *expect;
    size_t len, got_len, expect_len;
    int fds[2], fd, status;
    pid_t pid;

    fx_make_image(&src, 37, 23, 1, 1, 255, 8);
    fx_write_image(in, &src);
    data = fx_read_file(in, &len);
    fx_ref_scale(&src, -3, SP_REDUCE_BOX, &want);
    expect = fx_pnm_bytes(&want, &expect_len);

    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        _exit(write(fds[1], data, len) != (ssize_t)len);
    }
    close(fds[1]);
    if (fds[0] != STDIN_FILENO) {
        ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
        close(fds[0]);
    }
    fflush(stdout);
    fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    if (fd != STDOUT_FILENO) {
        ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
        close(fd);
    }

    ck_assert_int_eq(run("-", "-", SP_IO_MMAP, -3, &sp_filter_box, 10, &r),
                     SP_OK);
    fflush(stdout);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    got = fx_read_file(out, &got_len);
    ck_assert_uint_eq(got_len, expect_len);
    ck_assert_mem_eq(got, expect, got_len);
    free(got);
    free(expect);
    free(data);
    sp_image_release(&want);
    sp_image_release(&src);
}
END_TEST

/* print_report: sp_report_print into a string. */
static char *print_report(const struct sp_report *r, int json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(f);
    sp_report_print(r, SP_OK, json, f);
    ck_assert_int_eq(fclose(f), 0);
    /* One line: a newline at the end and nowhere else. */
    ck_assert_uint_gt(len, 1);
    ck_assert_int_eq(buf[len - 1], '\n');
    ck_assert_ptr_eq(strchr(buf, '\n'), buf + len - 1);
    return buf;
}

/* json_value: skip one JSON value at *P (string or non-negative integer);
 * returns 0 when it is malformed. */
static int json_value(const char **p, int *is_string)
{
    const char *s = *p;

    if (*s == '"') {
        for (s++; *s != '"'; s++)
            if (*s == '\0' || *s == '\\' || *s == '\n')
                return 0;
        *p = s + 1;
        *is_string = 1;
        return 1;
    }
    if (*s < '0' || *s > '9')
        return 0;
    while (*s >= '0' && *s <= '9')
        s++;
    *p = s;
    *is_string = 0;
    return 1;
}

/* json_check: LINE is one flat JSON object of string keys and string or
 * integer values; each of KEYS is among them with a number (or a string
 * when its name is given with a leading '$'). */
static void json_check(const char *line, const char *const *keys,
                       size_t nkeys)
{
    const char *p = line;
    int found[32] = {0};

    ck_assert_uint_le(nkeys, 32);
    ck_assert_int_eq(*p++, '{');
    for (;;) {
        const char *key = p + 1, *kend;
        int is_string;

        ck_assert_int_eq(*p, '"');
        ck_assert(json_value(&p, &is_string));
        kend = p - 1;
        ck_assert_msg(*p++ == ':', "json: ':' expected in '%s'", line);
        ck_assert_msg(json_value(&p, &is_string), "json: bad value in '%s'",
                      line);
        for (size_t k = 0; k < nkeys; k++) {
            const char *want = keys[k] + (keys[k][0] == '$');
            if (strlen(want) == (size_t)(kend - key) &&
                strncmp(key, want, (size_t)(kend - key)) == 0) {
                ck_assert_msg(is_string == (keys[k][0] == '$'),
                              "json: %s has the wrong type", want);
                found[k]++;
            }
        }
        if (*p == ',') {
            p++;
            continue;
        }
        break;
    }
    ck_assert_msg(strcmp(p, "}\n") == 0, "json: trailing '%s'", p);
    for (size_t k = 0; k < nkeys; k++)
        ck_assert_msg(found[k] == 1, "json: key %s seen %d times", keys[k],
                      found[k]);
}

START_TEST(test_report_print)
{
    static const char *const kv_keys[] = {
        "io", "codec", "threads", "load_ns", "load_minflt", "load_majflt", "scale_ns",
        "scale_minflt", "scale_majflt", "release_ns", "release_minflt",
        "release_majflt", "write_ns", "write_minflt", "write_majflt", "in",
        "out", "input", "output", "factor", "filter", "status",
    };
    static const char *const json_keys[] = {
        "$input", "$output", "factor", "$filter", "$io", "$codec", "threads", "load_ns", "load_minflt", "load_majflt",
        "scale_ns", "scale_minflt", "scale_majflt", "release_ns",
        "release_minflt", "release_majflt", "write_ns", "write_minflt",
        "write_majflt", "$in", "$out", "$status",
    };
    const char *in = fx_path("in.ppm");
    struct sp_image src;
    struct sp_report r;
    char *line, *tok, *save = NULL;
    size_t seen[sizeof kv_keys / sizeof kv_keys[0]] = {0};

    fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    fx_write_image(in, &src);
    ck_assert_int_eq(run(in, fx_path("out.ppm"), SP_IO_MMAP, 2,
                         &sp_filter_sample, 3, &r), SP_OK);

    line = print_report(&r, 0);
    ck_assert_ptr_nonnull(strstr(line, "io=mmap "));
    ck_assert_ptr_nonnull(strstr(line, " codec=pnm "));
    ck_assert_ptr_nonnull(strstr(line, "threads=3 "));
    ck_assert_ptr_nonnull(strstr(line, " in=37x23 "));
    ck_assert_ptr_nonnull(strstr(line, " out=74x46 status=ok\n"));
    /* Every token is key=value, every key once, the numbers numbers. */
    for (tok = strtok_r(line, " \n", &save); tok != NULL;
         tok = strtok_r(NULL, " \n", &save)) {
        char *eq = strchr(tok, '=');
        size_t k;

        ck_assert_msg(eq != NULL && eq != tok && eq[1] != '\0',
                      "token '%s' is not key=value", tok);
        *eq = '\0';
        for (k = 0; k < sizeof kv_keys / sizeof kv_keys[0]; k++)
            if (strcmp(tok, kv_keys[k]) == 0)
                break;
        ck_assert_msg(k < sizeof kv_keys / sizeof kv_keys[0],
                      "unknown key '%s'", tok);
        seen[k]++;
        if (strstr(tok, "_ns") || strstr(tok, "flt") ||
            strcmp(tok, "threads") == 0)
            ck_assert_msg(strspn(eq + 1, "0123456789") == strlen(eq + 1),
                          "%s=%s is not a number", tok, eq + 1);
    }
    for (size_t k = 0; k < sizeof kv_keys / sizeof kv_keys[0]; k++)
        ck_assert_msg(seen[k] == 1, "key %s seen %zu times", kv_keys[k],
                      seen[k]);
    free(line);

    line = print_report(&r, 1);
    json_check(line, json_keys, sizeof json_keys / sizeof json_keys[0]);
    ck_assert_ptr_nonnull(strstr(line, "\"io\":\"mmap\""));
    ck_assert_ptr_nonnull(strstr(line, "\"threads\":3"));
    ck_assert_ptr_nonnull(strstr(line, "\"out\":\"74x46\""));
    free(line);

    /* A failed run's report prints too. */
    ck_assert_int_ne(run(fx_path("none"), fx_path("o.ppm"), SP_IO_READ, 2,
                         &sp_filter_sample, 3, &r), SP_OK);
    free(print_report(&r, 0));
    line = print_report(&r, 1);
    json_check(line, json_keys, sizeof json_keys / sizeof json_keys[0]);
    free(line);
    sp_image_release(&src);
}
END_TEST

/* A batch's file's record names its worker and interval, before the
 * status, in both forms; a one-file run's has none of the three. */
START_TEST(test_report_batch_fields)
{
    struct sp_report r = {.input = "a.jpg", .output = "out/a.jpg",
                          .factor = -2, .filter = "sample"};
    char *line;

    line = print_report(&r, 1);
    ck_assert_ptr_null(strstr(line, "worker"));
    free(line);
    r.in_batch = 1;
    r.worker = 1;
    r.start_ns = 5;
    r.end_ns = 9;
    line = print_report(&r, 1);
    ck_assert_ptr_nonnull(strstr(line, ",\"worker\":1,\"start_ns\":5,"
                                       "\"end_ns\":9,\"status\":\"ok\"}"));
    free(line);
    line = print_report(&r, 0);
    ck_assert_ptr_nonnull(strstr(line, " worker=1 start_ns=5 end_ns=9 "
                                       "status=ok\n"));
    free(line);
}
END_TEST

/* The phases were measured: time passes in the load and the scale of a
 * non-trivial image, and page faults are counted in the phase that made
 * them: the load reads the raster into fresh memory, the scale writes
 * fresh output buffers. */
START_TEST(test_report_timings)
{
    const char *in = fx_path("in.ppm");
    struct sp_image src;
    struct sp_report r;

    fx_make_image(&src, 300, 200, 3, 1, 255, 1);
    fx_write_image(in, &src);
    ck_assert_int_eq(run(in, fx_path("out.ppm"), SP_IO_READ, 3,
                         &sp_filter_sample, 2, &r), SP_OK);
    ck_assert_uint_gt(r.phase[SP_LOAD].ns, 0);
    ck_assert_uint_gt(r.phase[SP_SCALE].ns, 0);
    ck_assert_uint_gt(r.phase[SP_WRITE].ns, 0);
    ck_assert_int_gt(r.phase[SP_LOAD].minflt, 0);
    ck_assert_int_gt(r.phase[SP_SCALE].minflt, 0);
    sp_image_release(&src);
}
END_TEST

/* The SIGBUS guard: the input is truncated to its header between load and
 * scale, so every worker that reads the mapping faults.  With mmap that is
 * SP_E_CHANGED, not a dead process, and no output; so it is with pread,
 * whose reads come up short; with read the raster was already copied and
 * the job succeeds.  Many times, both filters (the
 * box filter's scratch memory must not leak when a worker jumps out). */

static Suite *job_report_suite(void)
{
    Suite *s = suite_create("job_report");
    TCase *tc = fx_tcase("run");
    tcase_add_test(tc, test_stdin_stdout);
    tcase_add_test(tc, test_report_print);
    tcase_add_test(tc, test_report_timings);
    tcase_add_test(tc, test_report_batch_fields);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(job_report_suite());
}
