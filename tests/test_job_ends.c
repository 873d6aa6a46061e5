/* test_job_ends.c: a job's sources and targets (input.h, target.h): a
 * descriptor (a regular file from where it stands, a pipe), bytes in
 * memory; a descriptor, growable memory, a callback; each gives the path
 * job's bytes, for PNM, PNG and JPEG inputs and outputs, on each load
 * path; the names the report gives them; a memory target that grows
 * through several reallocs; a callback that fails part-way fails the job
 * with its status, and a failed job hands no memory over. */
#include "job_lib.h"

/* The inputs, and the outputs asked of each. */
static const char *const in_names[] = {"in.ppm", "in.png", "in.jpg"};
static const struct {
    const char *name;
    enum sp_outfmt fmt;
} outs[] = {{"out.pnm", SP_OUT_PNM}, {"out.png", SP_OUT_PNG},
            {"out.jpg", SP_OUT_JPEG}};

/* make_inputs: in.ppm, in.png and in.jpg in fx_dir, of one W x H RGB
 * image. */
static void make_inputs(size_t w, size_t h)
{
    struct sp_image img;
    char why[SP_WHY_MAX];

    fx_make_image(&img, w, h, 3, 1, 255, 7);
    fx_write_image(fx_path("in.ppm"), &img);
    ck_assert_int_eq(sp_write(&img, fx_path("in.png"), SP_OUT_PNG, why),
                     SP_OK);
    ck_assert_int_eq(sp_write(&img, fx_path("in.jpg"), SP_OUT_JPEG, why),
                     SP_OK);
    sp_image_release(&img);
}

/* A job from IN to OUT as FMT by IO, reduced by 2 on 2 threads. */
static struct sp_job job_of(struct sp_src in, struct sp_target out,
                            enum sp_outfmt fmt, enum sp_io io)
{
    return (struct sp_job){.in = in, .out = out, .fmt = fmt, .io = io,
                           .factor = -2, .filter = &sp_filter_sample,
                           .threads = 2};
}

/* reference: the path-to-path job's bytes of IN_NAME as FMT by IO. */
static unsigned char *reference(const char *in_name, enum sp_outfmt fmt,
                                enum sp_io io, size_t *len)
{
    struct sp_job job = job_of(sp_src_path(fx_path(in_name)),
                               sp_target_path(fx_path("ref")), fmt, io);
    struct sp_report r;
    sp_status st = sp_job_exec(&job, &r);

    ck_assert_msg(st == SP_OK, "%s: %s (%s)", in_name, sp_strerror(st),
                  r.why);
    return fx_read_file(fx_path("ref"), len);
}

/* expect_same: LEN bytes at GOT are WANT's WANT_LEN; WHAT names them. */
static void expect_same(const unsigned char *got, size_t len,
                        const unsigned char *want, size_t want_len,
                        const char *what)
{
    ck_assert_msg(len == want_len, "%s: %zu bytes, not %zu", what, len,
                  want_len);
    ck_assert_msg(memcmp(got, want, len) == 0, "%s: other bytes", what);
}

/* run_ok: JOB run, which must succeed. */
static void run_ok(struct sp_job *job, struct sp_report *r, const char *what)
{
    sp_status st = sp_job_exec(job, r);

    ck_assert_msg(st == SP_OK, "%s: %s (%s)", what, sp_strerror(st), r->why);
}

/* A callback's sink: the bytes taken so far, and where it fails (after
 * FAIL_AT bytes, with FAIL; FAIL 0: never). */
struct sink {
    unsigned char *buf;
    size_t len, cap;
    size_t fail_at;
    sp_status fail;
    int failed;          /* it has failed once */
    unsigned after;      /* calls after that */
};

static sp_status take(void *arg, const void *p, size_t n)
{
    struct sink *s = arg;

    s->after += s->failed;
    if (s->fail != SP_OK && s->len + n > s->fail_at) {
        s->failed = 1;
        return s->fail;
    }
    if (s->len + n > s->cap) {
        s->cap = (s->len + n) * 2;
        s->buf = realloc(s->buf, s->cap);
        ck_assert_ptr_nonnull(s->buf);
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    return SP_OK;
}

/* Each source kind, each input, each load path: the path job's bytes. */
START_TEST(test_sources)
{
    make_inputs(61, 47);
    for (size_t i = 0; i < sizeof in_names / sizeof *in_names; i++) {
        const char *in = fx_path(in_names[i]);
        size_t in_len;
        unsigned char *bytes = fx_read_file(in, &in_len);

        for (size_t k = 0; k < FX_NIO; k++) {
            for (size_t o = 0; o < sizeof outs / sizeof *outs; o++) {
                size_t want_len, len;
                unsigned char *want = reference(in_names[i], outs[o].fmt,
                                                fx_io[k], &want_len);
                unsigned char *got;
                struct sp_report r;
                struct sp_job job;
                int fd = open(in, O_RDONLY | O_CLOEXEC);

                /* a descriptor of a regular file */
                ck_assert_int_ge(fd, 0);
                job = job_of(sp_src_fd(fd), sp_target_path(fx_path("o")),
                             outs[o].fmt, fx_io[k]);
                run_ok(&job, &r, "fd");
                got = fx_read_file(fx_path("o"), &len);
                expect_same(got, len, want, want_len, "fd source");
                free(got);
                /* not closed, and left just past the image */
                ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), (off_t)in_len);
                close(fd);

                /* bytes in memory: the memory path, whatever was asked */
                job = job_of(sp_src_memory(bytes, in_len),
                             sp_target_path(fx_path("o")), outs[o].fmt,
                             fx_io[k]);
                run_ok(&job, &r, "memory");
                ck_assert_int_eq(r.load.io_used, SP_IO_MEMORY);
                got = fx_read_file(fx_path("o"), &len);
                expect_same(got, len, want, want_len, "memory source");
                free(got);
                free(want);
            }
        }
        free(bytes);
    }
}
END_TEST

/* A descriptor read from where it stands: a regular file past a prefix,
 * a pipe fed by a child. */
START_TEST(test_source_positions)
{
    size_t in_len, want_len, len;
    unsigned char *bytes, *want, *got;
    struct sp_report r;
    struct sp_job job;
    int fd, fds[2], status;
    pid_t pid;

    make_inputs(40, 30);
    bytes = fx_read_file(fx_path("in.ppm"), &in_len);
    want = reference("in.ppm", SP_OUT_PNM, SP_IO_PREAD, &want_len);
    /* 5 bytes before the image, the descriptor past them */
    fd = open(fx_path("prefixed"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
              0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "junk\n", 5), 5);
    ck_assert_int_eq(write(fd, bytes, in_len), (ssize_t)in_len);
    ck_assert_int_eq(lseek(fd, 5, SEEK_SET), 5);
    for (size_t k = 0; k < FX_NIO; k++) {
        job = job_of(sp_src_fd(fd), sp_target_path(fx_path("o")),
                     SP_OUT_PNM, fx_io[k]);
        run_ok(&job, &r, "prefixed");
        got = fx_read_file(fx_path("o"), &len);
        expect_same(got, len, want, want_len, "from where it stands");
        free(got);
        ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), (off_t)(5 + in_len));
        ck_assert_int_eq(lseek(fd, 5, SEEK_SET), 5);
    }
    close(fd);

    /* a pipe: the stream path */
    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        _exit(write(fds[1], bytes, in_len) == (ssize_t)in_len ? 0 : 1);
    }
    close(fds[1]);
    job = job_of(sp_src_fd(fds[0]), sp_target_path(fx_path("o")), SP_OUT_PNM,
                 SP_IO_AUTO);
    run_ok(&job, &r, "pipe");
    ck_assert_int_ne(fcntl(fds[0], F_GETFD), -1);  /* not closed */
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    got = fx_read_file(fx_path("o"), &len);
    expect_same(got, len, want, want_len, "pipe source");
    free(got);
    free(want);
    free(bytes);
}
END_TEST

/* Each target kind, each input and output format: the path job's
 * bytes. */
START_TEST(test_targets)
{
    make_inputs(61, 47);
    for (size_t i = 0; i < sizeof in_names / sizeof *in_names; i++) {
        for (size_t o = 0; o < sizeof outs / sizeof *outs; o++) {
            enum sp_io io = fx_io[(i + o) % FX_NIO];
            const char *in = fx_path(in_names[i]);
            size_t want_len, len = 0;
            unsigned char *want = reference(in_names[i], outs[o].fmt, io,
                                            &want_len);
            unsigned char *got = NULL;
            struct sink sink = {0};
            struct sp_report r;
            struct sp_job job;
            int fd = open(fx_path("byfd"),
                          O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

            /* a descriptor, written from where it stands, left open */
            ck_assert_int_ge(fd, 0);
            ck_assert_int_eq(write(fd, "x", 1), 1);
            job = job_of(sp_src_path(in), sp_target_fd(fd), outs[o].fmt, io);
            run_ok(&job, &r, "fd target");
            ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), (off_t)(1 + want_len));
            close(fd);
            got = fx_read_file(fx_path("byfd"), &len);
            ck_assert_uint_eq(len, 1 + want_len);
            expect_same(got + 1, len - 1, want, want_len, "fd target");
            free(got);

            /* memory */
            got = NULL;
            job = job_of(sp_src_path(in), sp_target_memory(&got, &len),
                         outs[o].fmt, io);
            run_ok(&job, &r, "memory target");
            ck_assert_ptr_nonnull(got);
            expect_same(got, len, want, want_len, "memory target");
            free(got);

            /* a callback */
            job = job_of(sp_src_path(in), sp_target_callback(take, &sink),
                         outs[o].fmt, io);
            run_ok(&job, &r, "callback target");
            expect_same(sink.buf, sink.len, want, want_len,
                        "callback target");
            free(sink.buf);
            free(want);
        }
    }
}
END_TEST

/* The names the report gives each kind of source and target, and a name
 * the caller gives. */
START_TEST(test_names)
{
    unsigned char *got = NULL;
    size_t in_len, len;
    unsigned char *bytes;
    struct sink sink = {0};
    struct sp_report r;
    struct sp_job job;
    char label[16];
    int fd;

    make_inputs(20, 10);
    bytes = fx_read_file(fx_path("in.ppm"), &in_len);
    fd = open(fx_path("in.ppm"), O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    snprintf(label, sizeof label, "fd %d", fd);
    job = job_of(sp_src_fd(fd), sp_target_memory(&got, &len), SP_OUT_PNM,
                 SP_IO_READ);
    run_ok(&job, &r, "names");
    ck_assert_str_eq(r.input, label);
    ck_assert_str_eq(r.output, "memory");
    free(got);
    close(fd);
    job = job_of(sp_src_memory(bytes, in_len), sp_target_callback(take, &sink),
                 SP_OUT_PNM, SP_IO_READ);
    run_ok(&job, &r, "names");
    ck_assert_str_eq(r.input, "memory");
    ck_assert_str_eq(r.output, "callback");
    free(sink.buf);
    /* a name the caller gives is what a failure names */
    job = job_of(sp_src_memory(bytes, in_len / 2),
                 sp_target_memory(&got, &len), SP_OUT_PNM, SP_IO_READ);
    job.in.name = "upload.ppm";
    got = NULL;
    ck_assert_int_eq(sp_job_exec(&job, &r), SP_E_TRUNCATED);
    ck_assert_str_eq(r.failed_path, "upload.ppm");
    ck_assert_ptr_null(got);  /* nothing handed over */
    /* no memory, no descriptor */
    job = job_of(sp_src_memory(bytes, 0), sp_target_path(fx_path("o")),
                 SP_OUT_PNM, SP_IO_READ);
    ck_assert_int_eq(sp_job_exec(&job, &r), EINVAL);
    job = job_of(sp_src_fd(-1), sp_target_path(fx_path("o")), SP_OUT_PNM,
                 SP_IO_READ);
    ck_assert_int_eq(sp_job_exec(&job, &r), EINVAL);
    /* a format, or a PNM type, that is none */
    job = job_of(sp_src_memory(bytes, in_len), sp_target_path(fx_path("o")),
                 (enum sp_outfmt)99, SP_IO_READ);
    ck_assert_int_eq(sp_job_exec(&job, &r), SP_E_OUTFORMAT);
    job.fmt = SP_OUT_PNM;
    job.pnm_type = SP_WANT_STB;
    ck_assert_int_eq(sp_job_exec(&job, &r), SP_E_OUTFORMAT);
    ck_assert(!fx_file_exists(fx_path("o")));
    free(bytes);
}
END_TEST

/* A memory target that grows through several reallocs (from 64 KiB,
 * doubling) to a 1.6 MB PNM, and to a PNG and a JPEG; the enlarge's
 * rows, which a descriptor gets by writev(), go through stdio. */
START_TEST(test_memory_grows)
{
    const char *in;
    struct sp_report r;

    make_inputs(300, 300);
    in = fx_path("in.ppm");
    for (size_t o = 0; o < sizeof outs / sizeof *outs; o++) {
        struct sp_job job = job_of(sp_src_path(in),
                                   sp_target_path(fx_path("ref")),
                                   outs[o].fmt, SP_IO_MMAP);
        unsigned char *want, *got = NULL;
        size_t want_len, len = 0;

        job.factor = 3;
        run_ok(&job, &r, "reference");
        want = fx_read_file(fx_path("ref"), &want_len);
        job.out = sp_target_memory(&got, &len);
        run_ok(&job, &r, "memory");
        expect_same(got, len, want, want_len, outs[o].name);
        if (outs[o].fmt == SP_OUT_PNM)
            ck_assert_uint_gt(len, (size_t)16 * 64 * 1024);
        free(got);
        free(want);
    }
}
END_TEST

/* A callback that fails part-way: the job fails with its status (an
 * errno value or a project code), names the target, and the callback is
 * not called again. */
START_TEST(test_callback_fails)
{
    static const sp_status fails[] = {ENOSPC, SP_E_ENCODE};
    const char *in;
    struct sp_report r;

    make_inputs(300, 300);
    in = fx_path("in.ppm");
    for (size_t o = 0; o < sizeof outs / sizeof *outs; o++)
        for (size_t f = 0; f < sizeof fails / sizeof *fails; f++) {
            struct sink sink = {.fail_at = 20000, .fail = fails[f]};
            struct sp_job job = job_of(sp_src_path(in),
                                       sp_target_callback(take, &sink),
                                       outs[o].fmt, SP_IO_READ);

            job.factor = 2;
            ck_assert_int_eq(sp_job_exec(&job, &r), fails[f]);
            ck_assert_str_eq(r.failed_path, "callback");
            ck_assert_uint_le(sink.len, 20000);
            ck_assert(sink.failed);
            ck_assert_uint_eq(sink.after, 0);
            free(sink.buf);
        }
}
END_TEST

static Suite *job_ends_suite(void)
{
    Suite *s = suite_create("job_ends");
    TCase *tc = fx_tcase("ends");

    tcase_add_test(tc, test_sources);
    tcase_add_test(tc, test_source_positions);
    tcase_add_test(tc, test_targets);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_memory_grows);
    tcase_add_test(tc, test_callback_fails);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(job_ends_suite());
}
