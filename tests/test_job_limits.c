/* test_job_limits.c: --max-pixels: an output or input over the limit
 * refused before the work, from a file and from a pipe. */
#include "job_lib.h"

/* --max-pixels: an output or input over the limit is refused before the
 * output is allocated. */
START_TEST(test_max_pixels)
{
    struct sp_image img;
    struct sp_report r;
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out), .io = SP_IO_MMAP, .factor = 4,
                         .threads = 2, .max_pixels = 64 * 48 * 16 - 1};

    fx_make_image(&img, 64, 48, 3, 1, 255, 1);
    fx_write_image(in, &img);
    sp_image_release(&img);
    ck_assert_int_eq(fx_job_run(&job, &r), SP_E_LIMIT);
    ck_assert(strstr(r.why, "output is 256x192") != NULL);
    ck_assert(!fx_file_exists(out));
    job.max_pixels = 64 * 48 * 16;
    ck_assert_int_eq(fx_job_run(&job, &r), SP_OK);
    job.factor = -2;
    job.max_pixels = 64 * 48 - 1;
    ck_assert_int_eq(fx_job_run(&job, &r), SP_E_LIMIT);
    ck_assert(strstr(r.why, "input is 64x48") != NULL);
}
END_TEST

/* peak_kb: the most memory this process has held resident (VmHWM). */
static long peak_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;

    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    ck_assert_int_ge(kb, 0);
    return kb;
}

/* send_padded: a child writing HEAD and then PAD bytes of FILL into the
 * pipe FDS; it exits 0 when all were written, 2 when the reader left. */
static pid_t send_padded(const int fds[2], const char *head, int fill,
                         size_t pad)
{
    pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        static char block[1 << 16];
        size_t len = strlen(head);

        close(fds[0]);
        signal(SIGPIPE, SIG_IGN);
        memset(block, fill, sizeof block);
        while (len > 0 || pad > 0) {
            size_t n = len > 0 ? len : pad < sizeof block ? pad : sizeof block;
            ssize_t w = write(fds[1], len > 0 ? head : block, n);

            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                _exit(errno == EPIPE ? 2 : 1);
            if (len > 0) {
                head += w;
                len -= (size_t)w;
            } else {
                pad -= (size_t)w;
            }
        }
        _exit(0);
    }
    close(fds[1]);
    return pid;
}

/* The bytes job_from_pipe sends after the header: well over the 32 MB the
 * tests allow the peak to rise, so that a loader that held them would fail;
 * fewer under a sanitizer, whose instrumented byte loops read the blanks
 * many times slower (300 MB took most of the minute under a loaded TSan). */
#ifdef UNDER_SANITIZER
#define PIPE_PAD ((size_t)96 << 20)
#else
#define PIPE_PAD ((size_t)300 << 20)
#endif

/* job_from_pipe: JOB run on HEAD then PIPE_PAD bytes of FILL sent through
 * a pipe (JOB's input is set to it).  Returns the status; *GROWTH gets how far
 * the peak resident memory rose, in kB, and *FED the sender's exit (2:
 * cut off before the end). */
static sp_status job_from_pipe(struct sp_job *job, const char *head,
                               int fill, long *growth, int *fed)
{
    struct sp_report r;
    char in[64];
    int fds[2], status;
    long before = peak_kb();
    pid_t pid;
    sp_status st;

    ck_assert_int_eq(pipe(fds), 0);
    pid = send_padded(fds, head, fill, PIPE_PAD);
    snprintf(in, sizeof in, "/dev/fd/%d", fds[0]);
    job->in = sp_src_path(in);
    st = fx_job_run(job, &r);
    *growth = peak_kb() - before;
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    *fed = WEXITSTATUS(status);
    job->in = sp_src_path(NULL);
    return st;
}

/* --max-pixels is the loader's to apply, to the header: a pipe that
 * claims 100000x100000 and sends PIPE_PAD bytes is refused at once, having
 * held a few pages of it; a 1x1 P2 followed by PIPE_PAD blanks is scaled,
 * the blanks read through (as netpbm does, to know that no image
 * follows) in a few pages of memory. */
START_TEST(test_max_pixels_pipe)
{
    const char *out = fx_path("out.pnm");
    struct sp_job job = {.out = sp_target_path(out), .io = SP_IO_READ, .factor = -2,
                         .threads = 2, .max_pixels = 1000};
    unsigned char *bytes;
    size_t len;
    long growth;
    int fed;

    ck_assert_int_eq(job_from_pipe(&job, "P6\n100000 100000\n255\n", 0,
                                   &growth, &fed), SP_E_LIMIT);
    ck_assert_msg(growth < 32 << 10, "peak memory rose %ld kB", growth);
    ck_assert_int_eq(fed, 2);
    ck_assert(!fx_file_exists(out));

    job.max_pixels = 0;
    ck_assert_int_eq(job_from_pipe(&job, "P2\n1 1\n255\n7\n", ' ', &growth,
                                   &fed), SP_OK);
    ck_assert_msg(growth < 32 << 10, "peak memory rose %ld kB", growth);
    ck_assert_int_eq(fed, 0);
    bytes = fx_read_file(out, &len);
    ck_assert_uint_eq(len, 12);
    ck_assert_mem_eq(bytes, "P5\n1 1\n255\n\007", 12);
    free(bytes);
}
END_TEST

static unsigned load_reads, load_maps;

static ssize_t counted_read(int fd, void *buf, size_t len)
{
    load_reads++;
    return read(fd, buf, len);
}

static void *counted_mmap(void *addr, size_t len, int prot, int flags,
                          int fd, off_t off)
{
    load_maps++;
    return mmap(addr, len, prot, flags, fd, off);
}

/* A 6000x6000 file (108 MB, sparse) over --max-pixels 1000: refused by
 * every load path before its raster is read or mapped. */
START_TEST(test_max_pixels_file)
{
    const char *in = fx_path("big.ppm"), *out = fx_path("out.ppm");
    static const char head[] = "P6\n6000 6000\n255\n";
    struct sp_report r;
    int fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, head, strlen(head)), (ssize_t)strlen(head));
    ck_assert_int_eq(ftruncate(fd, (off_t)strlen(head) + 6000 * 6000 * 3),
                     0);
    close(fd);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];
        struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out), .io = io,
                             .factor = 2, .threads = 2, .max_pixels = 1000};
        long before = peak_kb();

        load_reads = load_maps = 0;
        sp_sys.read = counted_read;
        sp_sys.mmap = counted_mmap;
        ck_assert_int_eq(fx_job_run(&job, &r), SP_E_LIMIT);
        sp_sys_reset();
        ck_assert(strstr(r.why, "input is 6000x6000") != NULL);
        ck_assert_str_eq(r.failed_path, in);
        ck_assert_uint_eq(load_reads, 0);
        ck_assert_uint_eq(load_maps, 0);
        ck_assert_int_lt(peak_kb() - before, 32 << 10);
        ck_assert(!fx_file_exists(out));
    }
}
END_TEST

static Suite *job_limits_suite(void)
{
    Suite *s = suite_create("job_limits");
    TCase *tc = fx_tcase("run");
    tcase_add_test(tc, test_max_pixels);
    tcase_add_test(tc, test_max_pixels_pipe);
    tcase_add_test(tc, test_max_pixels_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(job_limits_suite());
}
