/* test_load_stream.c: streams: read only as far as the header says (a plain
 * raster, padding after it, the statuses); the accept hook. */
#include "load_lib.h"

/* ---- streams: read only as far as the header says ---- */

/* feed_then: a child that writes LEN bytes of DATA to the pipe FDS, then
 * PAD bytes of the byte FILL, and exits 0 when all were written, or 2 when
 * the reader closed the pipe first.  The caller closes its own FDS[1]. */
static pid_t feed_then(const int fds[2], const void *data, size_t len,
                       int fill, size_t pad)
{
    pid_t pid = fork();
    int fd = fds[1];

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        static unsigned char block[1 << 16];
        const unsigned char *p = data;

        close(fds[0]);  /* or the pipe never loses its last reader */
        signal(SIGPIPE, SIG_IGN);
        memset(block, fill, sizeof block);
        while (len > 0 || pad > 0) {
            size_t n = len > 0 ? len : pad < sizeof block ? pad : sizeof block;
            ssize_t w = write(fd, len > 0 ? p : block, n);

            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                _exit(errno == EPIPE ? 2 : 1);
            if (len > 0) {
                p += w;
                len -= (size_t)w;
            } else {
                pad -= (size_t)w;
            }
        }
        _exit(0);
    }
    return pid;
}

/* exit_code: reap PID, which must have exited; its exit status. */
static int exit_code(pid_t pid)
{
    int status;

    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* load_padded: load DATA followed by PAD bytes of FILL through a pipe by
 * its /dev/fd path, with ACCEPT; *FED gets the feeder's exit status (2:
 * the loader stopped reading before the end). */
static sp_status load_padded(const void *data, size_t len, int fill,
                             size_t pad, sp_accept_fn *accept, void *arg,
                             struct sp_image *img, struct sp_load_info *info,
                             int *fed)
{
    int fds[2];
    char path[64];
    pid_t pid;
    sp_status st;

    ck_assert_int_eq(pipe(fds), 0);
    pid = feed_then(fds, data, len, fill, pad);
    close(fds[1]);
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    st = sp_load_checked(path, SP_IO_READ, accept, arg, img, info);
    close(fds[0]);
    *fed = exit_code(pid);
    return st;
}

/* A plain image from a pipe is decoded as it arrives and the loader stops
 * after its last sample (and the one separator netpbm reads): 64 MiB of
 * blanks after a 1x1 P2 are neither read nor buffered. */
START_TEST(test_pipe_plain_stops)
{
    static const char text[] = "P2\n1 1\n255\n7\n";
    struct sp_image img;
    struct sp_load_info info;
    int fed;

    ck_assert_int_eq(load_padded(text, strlen(text), ' ', (size_t)64 << 20,
                                 NULL, NULL, &img, &info, &fed), SP_OK);
    ck_assert_int_eq(fed, 2);
    ck_assert_uint_eq(img.width, 1);
    ck_assert_uint_eq(img.height, 1);
    ck_assert_uint_eq(img.pixels[0], 7);
    ck_assert_uint_lt(info.input_bytes, (size_t)1 << 20);
    ck_assert_uint_eq(info.trailing_bytes, info.input_bytes - strlen(text));
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
}
END_TEST

/* A plain image larger than the first read (its rows decoded across the
 * bytes buffered with the header and those read after), from a pipe that
 * goes on: the same pixels as from the file. */
START_TEST(test_pipe_plain_large)
{
    const char *path = fx_path("big.ppm");
    struct sp_image want, img, from_file;
    struct sp_load_info info;
    unsigned char *data;
    size_t len;
    int fed;

    fx_make_image(&want, 211, 157, 3, 2, 65535, 3);
    write_plain(path, &want);
    data = fx_read_file(path, &len);
    ck_assert_uint_gt(len, (size_t)4 << 16);
    ck_assert_int_eq(load_padded(data, len, 'Z', (size_t)16 << 20, NULL,
                                 NULL, &img, &info, &fed), SP_OK);
    ck_assert_int_eq(fed, 2);
    ck_assert(fx_images_equal(&img, &want));
    ck_assert_int_eq(info.magic, '3');
    ck_assert_int_eq(info.trailing_image, 0);
    ck_assert_int_eq(sp_load(path, SP_IO_READ, &from_file, &info), SP_OK);
    ck_assert(fx_images_equal(&img, &from_file));
    sp_image_release(&from_file);
    sp_image_release(&img);
    sp_image_release(&want);
    free(data);
}
END_TEST

/* A plain raster that does not decode gets the same status from a pipe as
 * from a file: truncated when the input is too short for its samples (the
 * file's length check), else bad pixel data.  A claim of 2.7 GB decoded
 * from a pipe takes memory only for the rows that arrive. */
START_TEST(test_pipe_plain_statuses)
{
    static const struct {
        const char *text;
        sp_status want;
    } cases[] = {
        {"P2 3 3 255\nx", SP_E_TRUNCATED},
        {"P2 3 3 255\n1 2 3\n", SP_E_TRUNCATED},
        {"P2\n2 1\n255\n", SP_E_TRUNCATED},
        {"P2 2 1 255\n1 x 3 4 5 6", SP_E_BADRASTER},
        {"P2 2 1 255\n1 # 2\n", SP_E_BADRASTER},
        {"P3 2 1 255\n10 20 30 40 50 60", SP_E_BADRASTER},
        {"P2 2 1 255\n1 256\n", SP_E_BADRASTER},
        {"P2 2 1 255\n1\t2\n", SP_OK},
        {"P3\n30000 30000\n255\n1 2 3\n", SP_E_TRUNCATED},
    };
    const char *path = fx_path("p.pnm");
    struct sp_image img;
    struct sp_load_info info;

    fx_limit_as((size_t)256 << 20);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].text);
        sp_status by_file, by_pipe;

        fx_write_file(path, cases[i].text, len);
        by_file = sp_load(path, SP_IO_READ, &img, &info);
        sp_image_release(&img);
        by_pipe = load_pipe(cases[i].text, len, 0, SP_IO_READ, &img, &info);
        sp_image_release(&img);
        ck_assert_msg(by_file == cases[i].want && by_pipe == cases[i].want,
                      "'%s': file %s, pipe %s", cases[i].text,
                      sp_strerror(by_file), sp_strerror(by_pipe));
    }
}
END_TEST

/* What an accept hook saw, and what it answers. */
struct verdict {
    unsigned calls;
    struct sp_header hdr;
    sp_status answer;
};

static sp_status record_accept(struct sp_header *hdr, void *arg,
                               char *why)
{
    struct verdict *v = arg;

    v->calls++;
    v->hdr = *hdr;
    if (v->answer != SP_OK)
        snprintf(why, SP_WHY_MAX, "not this one");
    return v->answer;
}

static unsigned raster_reads;

static ssize_t counting_read(int fd, void *buf, size_t len)
{
    raster_reads++;
    return read(fd, buf, len);
}

static void *counting_mmap(void *addr, size_t len, int prot, int flags,
                           int fd, off_t off)
{
    mmap_calls++;
    return mmap(addr, len, prot, flags, fd, off);
}

/* The hook is asked once, with the parsed header, before the raster is
 * read (read), mapped (mmap) or buffered past the first read (a pipe);
 * its refusal is the load's status and its words are INFO->why. */
START_TEST(test_accept_hook)
{
    const char *path = fx_path("in.ppm");
    struct sp_image want, img;
    struct sp_load_info info;
    unsigned char *data;
    size_t len;
    int fds = fx_count_fds();

    fx_make_image(&want, 37, 23, 3, 1, 255, 2);
    fx_write_image(path, &want);
    data = fx_pnm_bytes(&want, &len);
    /* by each path of the file, then by pipe */
    for (size_t how = 0; how <= FX_NIO; how++) {
        for (int refuse = 0; refuse <= 1; refuse++) {
            struct verdict v = {0, {0}, refuse ? SP_E_LIMIT : SP_OK};
            int file = how < FX_NIO;
            sp_status st;
            int fed;

            raster_reads = mmap_calls = 0;
            sp_sys.read = counting_read;
            sp_sys.mmap = counting_mmap;
            st = file ? sp_load_checked(path, fx_io[how], record_accept, &v,
                                        &img, &info)
                      : load_padded(data, len, 0, 0, record_accept, &v,
                                    &img, &info, &fed);
            sp_sys_reset();
            ck_assert_uint_eq(v.calls, 1);
            ck_assert_uint_eq(v.hdr.width, 37);
            ck_assert_uint_eq(v.hdr.height, 23);
            ck_assert_int_eq(v.hdr.raster_offset, 13);
            if (refuse) {
                ck_assert_int_eq(st, SP_E_LIMIT);
                ck_assert_str_eq(info.why, "not this one");
                ck_assert_ptr_null(img.base);
                ck_assert_uint_eq(mmap_calls, 0);
                ck_assert_uint_eq(raster_reads, file ? 0 : 1);
            } else {
                ck_assert_int_eq(st, SP_OK);
                ck_assert_uint_eq(mmap_calls,
                                  file && fx_io[how] == SP_IO_MMAP);
                fx_in_memory(&img);
                ck_assert(fx_images_equal(&img, &want));
            }
            sp_image_release(&img);
        }
    }
    ck_assert_int_eq(fx_count_fds(), fds);
    free(data);
    sp_image_release(&want);
}
END_TEST

static Suite *load_stream_suite(void)
{
    Suite *s = suite_create("load_stream");
    TCase *tc = fx_tcase("streams");
    tcase_add_test(tc, test_pipe_plain_stops);
    tcase_add_test(tc, test_pipe_plain_large);
    tcase_add_test(tc, test_pipe_plain_statuses);
    tcase_add_test(tc, test_accept_hook);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_stream_suite());
}
