/* The loader: read and mmap give the same pixels; the path used, trailing
 * data, streams (read only as far as the header says), an input's images
 * (two streams on one thread, what may follow an image) and the accept
 * hook; the syscall seam (EINTR, short reads, mmap failure, a file that
 * shrinks, grows or is rewritten while it is loaded); no descriptor or
 * mapping outlives a release. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"
#include "input.h"
#include "sys.h"

/* write_plain: IMG as a P2/P3 file, with lines of varying length and a
 * comment in the raster. */
static void write_plain(const char *path, const struct sp_image *img)
{
    FILE *f = fopen(path, "w");
    size_t n = 0;

    ck_assert_ptr_nonnull(f);
    fprintf(f, "P%c\n# plain\n%zu %zu\n%u\n", img->channels == 3 ? '3' : '2',
            img->width, img->height, img->maxval);
    for (size_t y = 0; y < img->height; y++) {
        for (size_t x = 0; x < img->width; x++) {
            for (unsigned c = 0; c < img->channels; c++, n++)
                fprintf(f, "%s%u", n == 0 ? "" : n % 11 == 10 ? "\n"
                                   : n % 29 == 5 ? " # hm\n" : " ",
                        fx_sample(img, x, y, c));
        }
    }
    /* One separator after the last sample: it ends the image. */
    fputc('\n', f);
    ck_assert_int_eq(fclose(f), 0);
}

struct format {
    size_t w, h;
    unsigned channels, sample_size, maxval;
    int plain;
};

static const struct format formats[] = {
    {37, 23, 3, 1, 255, 0},
    {37, 23, 1, 1, 255, 0},
    {37, 23, 3, 2, 65535, 0},
    {37, 23, 1, 2, 65535, 0},
    {29, 31, 1, 2, 1000, 0},
    {1, 1, 3, 1, 255, 0},
    {1, 1, 1, 2, 256, 0},
    {5, 3, 1, 1, 1, 0},
    {211, 157, 3, 1, 255, 0},  /* several pages: the raster crosses them */
    {13, 11, 3, 1, 255, 1},
    {13, 11, 1, 1, 200, 1},
    {13, 11, 3, 2, 65535, 1},
    {13, 11, 1, 2, 4095, 1},
    {1, 1, 1, 1, 1, 1},
};

static void make_file(const struct format *fm, const char *path,
                      struct sp_image *img, unsigned seed)
{
    fx_make_image(img, fm->w, fm->h, fm->channels, fm->sample_size, fm->maxval,
                  seed);
    if (fm->plain)
        write_plain(path, img);
    else
        fx_write_image(path, img);
}

/* Both paths give the image that was written, and say how. */
START_TEST(test_read_mmap_identical)
{
    const struct format *fm = &formats[_i];
    const char *path = fx_path("in.pnm");
    struct sp_image want, got[FX_NIO];
    struct sp_load_info info;
    struct stat sb;

    make_file(fm, path, &want, (unsigned)_i);
    ck_assert_int_eq(stat(path, &sb), 0);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];
        struct sp_image *img = &got[pi];

        ck_assert_int_eq(sp_load(path, io, img, &info), SP_OK);
        ck_assert_int_eq(info.magic, fm->plain ? (fm->channels == 3 ? '3'
                                                                   : '2')
                                               : (fm->channels == 3 ? '6'
                                                                   : '5'));
        ck_assert_uint_eq(info.input_bytes, (size_t)sb.st_size);
        ck_assert_uint_eq(info.trailing_bytes, 0);
        ck_assert_int_eq(info.trailing_image, 0);
        if (fm->plain || io == SP_IO_READ) {
            ck_assert_int_eq(info.io_used, SP_IO_READ);
            ck_assert_int_eq(img->backing, SP_BACKING_MALLOC);
        } else if (io == SP_IO_MMAP) {
            ck_assert_int_eq(info.io_used, SP_IO_MMAP);
            /* The input's (mapped) raster: its bookkeeping is the whole
             * mapping; the view is inside. */
            ck_assert_int_eq(img->backing, SP_BACKING_OWNED);
            ck_assert_uint_eq(img->base_len, (size_t)sb.st_size);
            ck_assert_ptr_eq(img->pixels,
                             (unsigned char *)img->base + info.raster_offset);
        } else {
            /* pread: the raster stays in the file, read as rows are */
            ck_assert_int_eq(info.io_used, SP_IO_PREAD);
            ck_assert_int_eq(img->backing, SP_BACKING_OWNED);
            ck_assert_ptr_null(img->pixels);
            ck_assert_ptr_null(img->base);
        }
        ck_assert_uint_eq(img->stride, fm->w * fm->channels * fm->sample_size);
        fx_in_memory(img);
        ck_assert_msg(fx_images_equal(img, &want), "%zux%zu c%u b%u m%u "
                      "plain %d by %s: pixels differ", fm->w, fm->h,
                      fm->channels, fm->sample_size, fm->maxval, fm->plain,
                      sp_io_name(io));
    }
    for (size_t pi = 1; pi < FX_NIO; pi++)
        ck_assert(fx_images_equal(&got[pi], &got[0]));
    for (size_t pi = 0; pi < FX_NIO; pi++)
        ck_assert_int_eq(sp_image_release(&got[pi]), SP_OK);
    sp_image_release(&want);
}
END_TEST

/* feed: a child process that writes LEN bytes of DATA to FD and exits;
 * returns its pid.  The caller closes its own copy of FD. */
static pid_t feed(int fd, const void *data, size_t len)
{
    pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const unsigned char *p = data;

        signal(SIGPIPE, SIG_DFL);
        while (len > 0) {
            ssize_t n = write(fd, p, len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                _exit(1);
            p += n;
            len -= (size_t)n;
        }
        _exit(0);
    }
    return pid;
}

/* to_stdin: make FD standard input (FD may be 0 already, when the test
 * runs with standard input closed). */
static void to_stdin(int fd)
{
    if (fd != STDIN_FILENO) {
        ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
        close(fd);
    }
}

static void reap(pid_t pid)
{
    int status;

    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
}

/* load_pipe: load DATA through a pipe named /dev/fd/N (or stdin when
 * STDIN is set) asking for IO.  Returns the status. */
static sp_status load_pipe(const void *data, size_t len, int as_stdin,
                           enum sp_io io, struct sp_image *img,
                           struct sp_load_info *info)
{
    int fds[2];
    char path[64];
    pid_t pid;
    sp_status st;

    ck_assert_int_eq(pipe(fds), 0);
    pid = feed(fds[1], data, len);
    close(fds[1]);
    if (as_stdin) {
        to_stdin(fds[0]);
        st = sp_load("-", io, img, info);
        /* The loader does not close standard input. */
        ck_assert_int_ne(fcntl(STDIN_FILENO, F_GETFD), -1);
        close(STDIN_FILENO);
    } else {
        snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
        st = sp_load(path, io, img, info);
        close(fds[0]);
    }
    reap(pid);
    return st;
}

/* A pipe (several times the loader's first buffer), as a path and as
 * standard input, is read whatever was asked. */
START_TEST(test_pipe_and_stdin)
{
    struct sp_image want, img;
    struct sp_load_info info;
    unsigned char *data;
    size_t len;

    fx_make_image(&want, 301, 200, 3, 1, 255, 5);
    data = fx_pnm_bytes(&want, &len);
    for (int as_stdin = 0; as_stdin <= 1; as_stdin++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            ck_assert_int_eq(load_pipe(data, len, as_stdin, fx_io[pi],
                                       &img, &info), SP_OK);
            ck_assert_int_eq(info.io_used, SP_IO_READ);
            ck_assert(fx_images_equal(&img, &want));
            ck_assert_uint_eq(info.input_bytes, len);
            ck_assert_uint_eq(info.trailing_bytes, 0);
            ck_assert_int_eq(sp_image_release(&img), SP_OK);
        }
    }
    free(data);
    sp_image_release(&want);
}
END_TEST

/* Plain and 16-bit images through a pipe; an empty pipe. */
START_TEST(test_pipe_formats)
{
    struct sp_image want, img;
    struct sp_load_info info;
    unsigned char *data;
    size_t len;

    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        make_file(&formats[i], fx_path("f.pnm"), &want, 9);
        data = fx_read_file(fx_path("f.pnm"), &len);
        ck_assert_int_eq(load_pipe(data, len, 0, SP_IO_MMAP, &img, &info),
                         SP_OK);
        ck_assert_msg(fx_images_equal(&img, &want), "format %zu", i);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
        free(data);
        sp_image_release(&want);
    }
    ck_assert_int_eq(load_pipe("", 0, 0, SP_IO_MMAP, &img, &info),
                     SP_E_EMPTY);
    ck_assert_int_eq(load_pipe("", 0, 1, SP_IO_READ, &img, &info),
                     SP_E_EMPTY);
    ck_assert_int_eq(load_pipe("P6\n2 2\n255\nabc", 15, 0, SP_IO_READ, &img,
                               &info), SP_E_TRUNCATED);
    ck_assert_ptr_null(img.base);
}
END_TEST

/* A FIFO in the file system is read, not mapped. */
START_TEST(test_fifo)
{
    const char *path = fx_path("fifo");
    struct sp_image want, img;
    struct sp_load_info info;
    unsigned char *data;
    size_t len;
    pid_t pid;

    fx_make_image(&want, 40, 30, 1, 2, 65535, 2);
    data = fx_pnm_bytes(&want, &len);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(path, O_WRONLY);
        _exit(fd < 0 || write(fd, data, len) != (ssize_t)len);
    }
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    reap(pid);
    ck_assert_int_eq(info.io_used, SP_IO_READ);
    ck_assert(fx_images_equal(&img, &want));
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    free(data);
    sp_image_release(&want);
}
END_TEST

/* Standard input redirected from a regular file loads right too. */
START_TEST(test_stdin_file)
{
    const char *path = fx_path("in.ppm");
    struct sp_image want, img;
    struct sp_load_info info;
    int fd;

    fx_make_image(&want, 17, 9, 3, 1, 255, 3);
    fx_write_image(path, &want);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        fd = open(path, O_RDONLY);
        ck_assert_int_ge(fd, 0);
        to_stdin(fd);
        ck_assert_int_eq(sp_load("-", fx_io[pi], &img, &info), SP_OK);
        ck_assert_int_eq(info.io_used, fx_io[pi]);
        fx_in_memory(&img);
        ck_assert(fx_images_equal(&img, &want));
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
        ck_assert_int_ne(fcntl(STDIN_FILENO, F_GETFD), -1);
        close(STDIN_FILENO);
    }
    sp_image_release(&want);
}
END_TEST

/* Bytes after the first image: counted, and recognised when they start a
 * second image; by file (both paths), by pipe, plain and binary. */
START_TEST(test_trailing)
{
    static const struct {
        const char *tail;
        int image;
    } tails[] = {
        {"junk\n", 0},
        {"\n", 0},
        {"P", 0},
        {"P9", 0},
        {"P6\n1 1\n255\nabc", 1},
        {"P5\n1 1\n255\na", 1},
        {"P2\n1 1\n9\n7\n", 1},
        {"P7\n", 1},
    };
    struct sp_image img, want;
    struct sp_load_info info;
    const char *path = fx_path("t.pnm");

    for (int plain = 0; plain <= 1; plain++) {
        size_t base_len, len, tl;
        unsigned char *base, *data;

        fx_make_image(&want, 7, 5, 3, 1, 255, 1);
        if (plain)
            write_plain(path, &want);
        else
            fx_write_image(path, &want);
        base = fx_read_file(path, &base_len);
        for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
            tl = strlen(tails[i].tail);
            data = malloc(base_len + tl);
            ck_assert_ptr_nonnull(data);
            memcpy(data, base, base_len);
            memcpy(data + base_len, tails[i].tail, tl);
            len = base_len + tl;
            fx_write_file(path, data, len);
            /* by each path of the file, then by pipe */
            for (size_t how = 0; how <= FX_NIO; how++) {
                sp_status st = how < FX_NIO
                    ? sp_load(path, fx_io[how], &img, &info)
                    : load_pipe(data, len, 0, SP_IO_MMAP, &img, &info);

                ck_assert_msg(st == SP_OK, "plain %d tail '%s' how %zu: %s",
                              plain, tails[i].tail, how, sp_strerror(st));
                fx_in_memory(&img);
                ck_assert(fx_images_equal(&img, &want));
                ck_assert_msg(info.trailing_bytes == tl,
                              "plain %d tail '%s' how %zu: %zu trailing",
                              plain, tails[i].tail, how, info.trailing_bytes);
                ck_assert_int_eq(info.trailing_image, tails[i].image);
                ck_assert_uint_eq(info.input_bytes, len);
                ck_assert_int_eq(sp_image_release(&img), SP_OK);
            }
            free(data);
        }
        free(base);
        sp_image_release(&want);
    }
}
END_TEST

/* ---- streams: read only as far as the header says ---- */

static unsigned mmap_calls;

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

static sp_status record_accept(const struct sp_header *hdr, void *arg,
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

/* ---- the syscall seam ---- */

static unsigned read_calls, eintr_every;
static unsigned madvise_calls;
static int open_flags;
static const char *shrink_path;
static off_t shrink_to;

/* Short reads of 1..7 bytes, with an EINTR every EINTR_EVERY calls (and
 * on the very first). */
static ssize_t flaky_read(int fd, void *buf, size_t len)
{
    size_t n = 1 + read_calls % 7;

    if (read_calls++ % eintr_every == 0) {
        errno = EINTR;
        return -1;
    }
    return read(fd, buf, n < len ? n : len);
}

static ssize_t failing_read(int fd, void *buf, size_t len)
{
    (void)fd;
    (void)buf;
    (void)len;
    read_calls++;
    errno = EIO;
    return -1;
}

static void *failing_mmap(void *addr, size_t len, int prot, int flags,
                          int fd, off_t off)
{
    (void)addr;
    (void)len;
    (void)prot;
    (void)flags;
    (void)fd;
    (void)off;
    mmap_calls++;
    errno = ENODEV;
    return MAP_FAILED;
}

static int failing_madvise(void *addr, size_t len, int advice)
{
    (void)addr;
    (void)len;
    (void)advice;
    madvise_calls++;
    errno = EINVAL;
    return -1;
}

static int failing_munmap(void *addr, size_t len)
{
    (void)addr;
    (void)len;
    errno = EINVAL;
    return -1;
}

static int recording_open(const char *path, int flags, ...)
{
    open_flags = flags;
    return open(path, flags);
}

static int failing_open(const char *path, int flags, ...)
{
    (void)path;
    (void)flags;
    errno = EMFILE;
    return -1;
}

static int failing_fstat(int fd, struct stat *sb)
{
    (void)fd;
    (void)sb;
    errno = EOVERFLOW;
    return -1;
}

/* fstat, then the file shrinks: the size the loader goes by is stale. */
static int shrinking_fstat(int fd, struct stat *sb)
{
    int r = fstat(fd, sb);

    ck_assert_int_eq(truncate(shrink_path, shrink_to), 0);
    return r;
}

/* The file shrinks just before it is mapped. */
static void *shrinking_mmap(void *addr, size_t len, int prot, int flags,
                            int fd, off_t off)
{
    ck_assert_int_eq(truncate(shrink_path, shrink_to), 0);
    return mmap(addr, len, prot, flags, fd, off);
}

/* The file shrinks just before the raster is read. */
static off_t shrinking_lseek(int fd, off_t off, int whence)
{
    ck_assert_int_eq(truncate(shrink_path, shrink_to), 0);
    return lseek(fd, off, whence);
}

/* EINTR and short reads on every read, by file and by pipe. */
START_TEST(test_seam_eintr_short_reads)
{
    struct sp_image want, img;
    struct sp_load_info info;
    const char *path = fx_path("in.pgm");
    unsigned char *data;
    size_t len;
    static const unsigned everies[] = {2, 3, 5};

    fx_make_image(&want, 53, 41, 1, 2, 65535, 4);
    fx_write_image(path, &want);
    data = fx_pnm_bytes(&want, &len);
    for (size_t e = 0; e < sizeof everies / sizeof everies[0]; e++) {
        eintr_every = everies[e];
        read_calls = 0;
        sp_sys.read = flaky_read;
        ck_assert_int_eq(sp_load(path, SP_IO_READ, &img, &info), SP_OK);
        sp_sys_reset();
        ck_assert_uint_gt(read_calls, want.base_len / 7);
        ck_assert(fx_images_equal(&img, &want));
        ck_assert_int_eq(sp_image_release(&img), SP_OK);

        read_calls = 0;
        sp_sys.read = flaky_read;
        ck_assert_int_eq(load_pipe(data, len, 0, SP_IO_MMAP, &img, &info),
                         SP_OK);
        sp_sys_reset();
        ck_assert_uint_gt(read_calls, len / 7);
        ck_assert(fx_images_equal(&img, &want));
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
    }
    free(data);
    sp_image_release(&want);
}
END_TEST

/* mmap refused: the file is read instead, and io_used says so. */
START_TEST(test_seam_mmap_fails)
{
    struct sp_image want, img;
    struct sp_load_info info;
    const char *path = fx_path("in.ppm");
    int fds;

    fx_make_image(&want, 31, 17, 3, 1, 255, 6);
    fx_write_image(path, &want);
    fds = fx_count_fds();
    mmap_calls = 0;
    sp_sys.mmap = failing_mmap;
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    sp_sys_reset();
    ck_assert_uint_eq(mmap_calls, 1);
    ck_assert_int_eq(info.io_used, SP_IO_READ);
    ck_assert_int_eq(img.backing, SP_BACKING_MALLOC);
    ck_assert(fx_images_equal(&img, &want));
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    ck_assert_int_eq(fx_count_fds(), fds);
    sp_image_release(&want);
}
END_TEST

/* A failing read, open or fstat is an errno, with nothing left open. */
START_TEST(test_seam_errors)
{
    struct sp_image want, img;
    struct sp_load_info info;
    const char *path = fx_path("in.ppm");
    int fds;

    fx_make_image(&want, 31, 17, 3, 1, 255, 6);
    fx_write_image(path, &want);
    fds = fx_count_fds();

    sp_sys.read = failing_read;
    ck_assert_int_eq(sp_load(path, SP_IO_READ, &img, &info), EIO);
    ck_assert_ptr_null(img.base);
    ck_assert_int_eq(load_pipe("P5 1 1 255 a", 12, 0, SP_IO_READ, &img,
                               &info), EIO);
    sp_sys_reset();
    ck_assert_int_eq(fx_count_fds(), fds);

    sp_sys.open = failing_open;
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), EMFILE);
    sp_sys_reset();

    sp_sys.fstat = failing_fstat;
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), EOVERFLOW);
    sp_sys_reset();
    ck_assert_int_eq(fx_count_fds(), fds);

    /* The input is opened close-on-exec. */
    sp_sys.open = recording_open;
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    sp_sys_reset();
    ck_assert_int_ne(open_flags & O_CLOEXEC, 0);
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    sp_image_release(&want);
}
END_TEST

/* shrink_case: make a several-page P6; load it by IO with the seam entry
 * the caller swapped in (it shrinks the file to 100 bytes); return the
 * status.  If the load "works" and TOUCH is set, every pixel is read, as
 * the scaler would. */
static volatile unsigned char sink;

static sp_status shrink_case(enum sp_io io, int touch,
                             struct sp_load_info *info)
{
    struct sp_image want, img;
    const char *path = fx_path("shrink.ppm");
    sp_status st;

    fx_make_image(&want, 100, 100, 3, 1, 255, 8);
    fx_write_image(path, &want);
    sp_image_release(&want);
    shrink_path = path;
    shrink_to = 100;
    st = sp_load(path, io, &img, info);
    sp_sys_reset();
    if (st == SP_OK) {
        for (size_t i = 0; touch && i < img.height * img.stride; i++)
            sink = img.pixels[i];
        sp_image_release(&img);
    } else {
        ck_assert_ptr_null(img.base);
    }
    return st;
}

/* The file shrinks after its size was taken, before the raster is read:
 * an error, not a crash and not a short image. */
START_TEST(test_shrink_read)
{
    struct sp_load_info info;
    int fds = fx_count_fds();

    sp_sys.lseek = shrinking_lseek;
    ck_assert_int_eq(shrink_case(SP_IO_READ, 1, &info), SP_E_CHANGED);
    sp_sys.fstat = shrinking_fstat;
    ck_assert_int_eq(shrink_case(SP_IO_READ, 1, &info), SP_E_CHANGED);
    ck_assert_int_eq(fx_count_fds(), fds);
}
END_TEST

START_TEST(test_shrink_mmap)
{
    struct sp_load_info info;
    sp_status st;

    /* The pages past the new end of a mapping raise SIGBUS when touched:
     * sp_load must notice that the file no longer holds the raster. */
    sp_sys.fstat = shrinking_fstat;
    st = shrink_case(SP_IO_MMAP, 0, &info);
    ck_assert_msg(st != SP_OK, "the file shrank after its size was taken, "
                  "yet the mmap load succeeded: its pages past the new end "
                  "raise SIGBUS when the scaler reads them");
    sp_sys.mmap = shrinking_mmap;
    st = shrink_case(SP_IO_MMAP, 0, &info);
    ck_assert_msg(st != SP_OK, "the file shrank before it was mapped, yet "
                  "the mmap load succeeded");
}
END_TEST

/* grow_case: the file holds the first CUT bytes of a 40x40 P6 when its
 * size is taken; the wrapped fstat then writes the whole image, as another
 * process appending to it would.  The loader must go by the size it took
 * (or see the change), never by what the header read past it says. */
static const unsigned char *grow_data;
static size_t grow_len;
static unsigned grow_calls;

static int growing_fstat(int fd, struct stat *sb)
{
    int r = fstat(fd, sb);

    if (grow_calls++ == 0)
        fx_write_file(shrink_path, grow_data, grow_len);
    return r;
}

START_TEST(test_grow_while_opened)
{
    static const size_t cuts[] = {1, 2, 5, 14, 15, 16, 15 + 2400};
    struct sp_image want, img;
    struct sp_load_info info;
    const char *path = fx_path("grow.ppm");
    unsigned char *data;
    size_t len;
    int fds = fx_count_fds();

    fx_make_image(&want, 40, 40, 3, 1, 255, 11);
    data = fx_pnm_bytes(&want, &len);  /* a 15-byte header */
    grow_data = data;
    grow_len = len;
    shrink_path = path;
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];
            sp_status st;

            fx_write_file(path, data, cuts[c]);
            grow_calls = 0;
            sp_sys.fstat = growing_fstat;
            st = sp_load(path, io, &img, &info);
            sp_sys_reset();
            ck_assert_msg(st == SP_E_CHANGED, "cut %zu, %s: %s", cuts[c],
                          sp_io_name(io), sp_strerror(st));
            ck_assert_ptr_null(img.base);
            ck_assert_int_eq(img.backing, SP_BACKING_NONE);
            ck_assert_int_eq(fx_count_fds(), fds);
            ck_assert_int_eq(fx_count_maps(path), 0);
        }
    }
    free(data);
    sp_image_release(&want);
}
END_TEST

/* ---- a file changed in place while it is read ---- */

static const char *rewrite_path;
static const unsigned char *rewrite_data;
static size_t rewrite_len;
static unsigned rewrite_at, rewrite_calls;

/* rewrite_now: at the REWRITE_AT'th call, write REWRITE_DATA over the file
 * in place, as dd conv=notrunc would. */
static void rewrite_now(void)
{
    if (++rewrite_calls == rewrite_at) {
        int fd = open(rewrite_path, O_WRONLY);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pwrite(fd, rewrite_data, rewrite_len, 0),
                         (ssize_t)rewrite_len);
        close(fd);
    }
}

static ssize_t rewriting_read(int fd, void *buf, size_t len)
{
    rewrite_now();
    return read(fd, buf, len);
}

static ssize_t rewriting_pread(int fd, void *buf, size_t len, off_t off)
{
    rewrite_now();
    return pread(fd, buf, len, off);
}

/* The read path copies the raster at load, so the load itself compares
 * the file's stamp once the bytes are in: a file rewritten in place with
 * another image of its size at the raster's read() (binary), or at the
 * first, second or third pread() (the header, then a plain raster's
 * decoding), by path and as standard input, is SP_E_CHANGED.  Its mtime
 * is set a day back first, so that the write changes it whatever the
 * file system's timestamp granularity. */
START_TEST(test_changed_while_read)
{
    const char *path = fx_path("in.pnm");
    struct sp_image a, b, img;
    struct sp_load_info info;
    int fds = fx_count_fds();

    for (int plain = 0; plain <= 1; plain++) {
        unsigned char *a_file, *b_file;
        size_t len;

        /* maxval 9: one digit a sample, so both plain files have one
         * size */
        fx_make_image(&a, 97, 61, 3, 1, plain ? 9 : 255, 1);
        fx_make_image(&b, 97, 61, 3, 1, plain ? 9 : 255, 2);
        if (plain) {
            write_plain(path, &b);
            b_file = fx_read_file(path, &len);
            write_plain(path, &a);
            a_file = fx_read_file(path, &rewrite_len);
            ck_assert_uint_eq(len, rewrite_len);
        } else {
            a_file = fx_pnm_bytes(&a, &len);
            b_file = fx_pnm_bytes(&b, &rewrite_len);
        }
        rewrite_path = path;
        rewrite_data = b_file;
        for (int at = 1; at <= (plain ? 3 : 1); at++) {
            for (int as_stdin = 0; as_stdin <= 1; as_stdin++) {
                struct timespec t[2] = {{time(NULL) - 86400, 0},
                                        {time(NULL) - 86400, 0}};
                int saved = dup(STDIN_FILENO);  /* -1: none */
                sp_status st;

                fx_write_file(path, a_file, len);
                ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
                if (as_stdin) {
                    int fd = open(path, O_RDONLY);

                    ck_assert_int_ge(fd, 0);
                    ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
                    close(fd);
                }
                rewrite_at = (unsigned)at;
                rewrite_calls = 0;
                if (plain)
                    sp_sys.pread = rewriting_pread;
                else
                    sp_sys.read = rewriting_read;
                st = sp_load(as_stdin ? "-" : path, SP_IO_READ, &img, &info);
                sp_sys_reset();
                if (saved >= 0) {
                    dup2(saved, STDIN_FILENO);
                    close(saved);
                } else {
                    close(STDIN_FILENO);
                }
                ck_assert_msg(st == SP_E_CHANGED, "plain %d, call %d%s: %s",
                              plain, at, as_stdin ? ", stdin" : "",
                              sp_strerror(st));
                ck_assert_ptr_null(img.base);
                ck_assert_int_eq(fx_count_fds(), fds);
            }
        }
        free(a_file);
        free(b_file);
        sp_image_release(&a);
        sp_image_release(&b);
    }
}
END_TEST

/* The header's start is read from the file once: the magic number the
 * parser checks is the one libnetpbm parses, and the one the plain decoder
 * parses again, even when the file is rewritten (here as a PAM, which the
 * parser refuses before libnetpbm sees it) right after the first pread. */
static unsigned preads;

static ssize_t rewriting_first_pread(int fd, void *buf, size_t len,
                                     off_t off)
{
    ssize_t n = pread(fd, buf, len, off);

    if (preads++ == 0)
        rewrite_now();
    return n;
}

START_TEST(test_header_read_once)
{
    static const char *const firsts[] = {"P5\n2 2\n255\n\001\002\003\004",
                                         "P2\n2 2\n255\n1 2 3 4\n"};
    static const char pam[] = "P7\nWIDTH 2\nHEIGHT 2\nBOGUS\n";
    const char *path = fx_path("in.pnm");
    struct sp_image img;
    struct sp_load_info info;

    for (size_t i = 0; i < 2; i++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];

            fx_write_text(path, firsts[i]);
            rewrite_path = path;
            rewrite_data = (const unsigned char *)pam;
            rewrite_len = strlen(pam);
            rewrite_at = 1;
            rewrite_calls = preads = 0;
            sp_sys.pread = rewriting_first_pread;
            ck_assert_int_eq(sp_load(path, io, &img, &info),
                             SP_E_CHANGED);
            sp_sys_reset();
            ck_assert_uint_eq(preads, 1);
            ck_assert_ptr_null(img.base);
        }
    }
}
END_TEST

/* ---- release ---- */

START_TEST(test_release_idempotent)
{
    struct sp_image img;
    struct sp_load_info info;
    const char *path = fx_path("in.ppm");

    memset(&img, 0, sizeof img);
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    fx_make_image(&img, 3, 3, 3, 1, 255, 0);
    fx_write_image(path, &img);
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];

        ck_assert_int_eq(sp_load(path, io, &img, &info), SP_OK);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
        ck_assert_int_eq(img.backing, SP_BACKING_NONE);
        ck_assert_ptr_null(img.base);
        ck_assert_ptr_null(img.pixels);
        ck_assert_uint_eq(img.base_len, 0);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
    }
    ck_assert_int_eq(fx_count_maps(path), 0);
}
END_TEST

/* madvise is advice: its failure is ignored.  munmap's is reported. */
START_TEST(test_release_seam)
{
    struct sp_image img;
    struct sp_load_info info;
    const char *path = fx_path("in.ppm");
    void *base;
    size_t len;

    fx_make_image(&img, 30, 30, 3, 1, 255, 0);
    fx_write_image(path, &img);
    sp_image_release(&img);

    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    ck_assert_int_eq(img.backing, SP_BACKING_OWNED);
    madvise_calls = 0;
    sp_sys.madvise = failing_madvise;
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    sp_sys_reset();
    ck_assert_uint_eq(madvise_calls, 1);
    ck_assert_int_eq(fx_count_maps(path), 0);

    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    base = img.base;
    len = img.base_len;
    sp_sys.munmap = failing_munmap;
    ck_assert_int_eq(sp_image_release(&img), EINVAL);
    sp_sys_reset();
    ck_assert_int_eq(img.backing, SP_BACKING_NONE);
    ck_assert_ptr_null(img.base);
    ck_assert_int_eq(munmap(base, len), 0);
    ck_assert_int_eq(fx_count_maps(path), 0);
}
END_TEST

/* Load and release many times, good and bad, by both paths: no
 * descriptor and no mapping is left behind. */
START_TEST(test_no_leaks)
{
    static const char *const bad[] = {
        "", "X", "P4\n1 1\n\0", "P5\n0 1\n255\n", "P6\n9 9\n255\nabc",
        "P2\n2 1\n9\n1 99\n", "P5\n1 1\n65536\nab",
    };
    struct sp_image want, img;
    struct sp_load_info info;
    const char *good = fx_path("good.ppm"), *plain = fx_path("plain.pgm");
    const char *badp = fx_path("bad.pnm");
    int fds;

    fx_make_image(&want, 64, 64, 3, 1, 255, 0);
    fx_write_image(good, &want);
    sp_image_release(&want);
    fx_write_text(plain, "P2\n2 2\n9\n1 2 3 4\n");

    for (int round = 0; round < 2; round++) {
        fds = fx_count_fds();
        for (int rep = 0; rep < 10; rep++) {
            for (size_t pi = 0; pi < FX_NIO; pi++) {
                enum sp_io io = fx_io[pi];

                ck_assert_int_eq(sp_load(good, io, &img, &info),
                                 SP_OK);
                if (io == SP_IO_MMAP)
                    ck_assert_int_ge(fx_count_maps(good), 1);
                ck_assert_int_eq(sp_image_release(&img), SP_OK);
                ck_assert_int_eq(fx_count_maps(good), 0);
                ck_assert_int_eq(sp_load(plain, io, &img, &info),
                                 SP_OK);
                ck_assert_int_eq(sp_image_release(&img), SP_OK);
                for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                    fx_write_file(badp, bad[i], strlen(bad[i]));
                    ck_assert_int_ne(sp_load(badp, io, &img,
                                             &info), SP_OK);
                    ck_assert_int_eq(fx_count_maps(badp), 0);
                }
                ck_assert_int_eq(sp_load(fx_dir, io, &img,
                                         &info), EISDIR);
                ck_assert_int_eq(sp_load(fx_path("none"), io,
                                         &img, &info), ENOENT);
            }
        }
        ck_assert_int_eq(fx_count_fds(), fds);
        /* No mapping of any file of this test is left. */
        ck_assert_int_eq(fx_count_maps(fx_dir), 0);
    }
}
END_TEST

/* Empty inputs of every kind, directories, missing files. */
START_TEST(test_odd_inputs)
{
    struct sp_image img;
    struct sp_load_info info;

    fx_write_text(fx_path("empty"), "");
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];

        ck_assert_int_eq(sp_load(fx_path("empty"), io, &img,
                                 &info), SP_E_EMPTY);
        ck_assert_int_eq(sp_load("/dev/null", io, &img, &info),
                         SP_E_EMPTY);
        ck_assert_int_eq(sp_load(fx_dir, io, &img, &info),
                         EISDIR);
        ck_assert_int_eq(sp_load(fx_path("missing"), io, &img,
                                 &info), ENOENT);
        ck_assert_int_eq(sp_load(fx_path("missing/x"), io, &img,
                                 &info), ENOENT);
        ck_assert_ptr_null(img.base);
    }
}
END_TEST

/* --- an input's images (sp_input) ------------------------------------- */

/* text_pipe: a pipe holding TEXT, its writer closed; returns the read
 * end. */
static int text_pipe(const char *text)
{
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
    close(p[1]);
    return p[0];
}

/* next_gray: load IN's next image, a 1x1 or 2x1 P5/P2, and return its
 * first sample; sp_input_more() into *MORE. */
static unsigned next_gray(struct sp_input *in, int *more)
{
    struct sp_load_info info;
    unsigned v;

    ck_assert_int_eq(sp_input_next(in, SP_IO_READ, NULL, NULL, &info), SP_OK);
    v = in->img.pixels[0];
    ck_assert_int_eq(sp_input_release(in), SP_OK);
    ck_assert_int_eq(sp_input_more(in, more), SP_OK);
    return v;
}

/* Two streams read in turn on one thread: what each read past an image
 * is its own input's (it lived in a thread-local keyed by the descriptor
 * at 1cd7bc8, which two inputs on one thread would have shared).  The
 * whitespace between images, CRLF and all, is skipped and counted; the
 * end is found; nothing is left open. */
START_TEST(test_input_two_streams)
{
    int fds = fx_count_fds();
    int a = text_pipe("P5 1 1 255\n\001\r\nP2 1 1 9 2 \t\nP5 1 1 255\n\003");
    int b = text_pipe("P5 1 1 255\n\011P5 1 1 255\n\012\n\n");
    char pa[64], pb[64];
    struct sp_input ia, ib;
    int ma, mb;

    snprintf(pa, sizeof pa, "/dev/fd/%d", a);
    snprintf(pb, sizeof pb, "/dev/fd/%d", b);
    ck_assert_int_eq(sp_input_open(&ia, pa, 0, NULL), SP_OK);
    ck_assert_int_eq(sp_input_open(&ib, pb, 0, NULL), SP_OK);
    close(a);
    close(b);
    ck_assert_uint_eq(next_gray(&ia, &ma), 1);
    ck_assert_int_eq(ma, 1);
    ck_assert_uint_eq(ia.skipped, 2);
    ck_assert_uint_eq(next_gray(&ib, &mb), 9);
    ck_assert_int_eq(mb, 1);
    ck_assert_uint_eq(next_gray(&ia, &ma), 2);
    ck_assert_int_eq(ma, 1);
    ck_assert_uint_eq(next_gray(&ib, &mb), 10);
    ck_assert_int_eq(mb, 0);
    ck_assert_uint_eq(ib.skipped, 2);
    ck_assert_uint_eq(next_gray(&ia, &ma), 3);
    ck_assert_int_eq(ma, 0);
    ck_assert_uint_eq(ia.images, 3);
    sp_input_close(&ia);
    sp_input_close(&ib);
    ck_assert_int_eq(fx_count_fds(), fds);
}
END_TEST

/* After an image, a file's bytes that are not whitespace are the next
 * image's start, and refused as any file's start is: the same statuses
 * from a file and from a stream; whitespace only is the end. */
START_TEST(test_input_after_image)
{
    static const struct {
        const char *tail;
        sp_status more_st;  /* of the load after sp_input_more() */
        int more;
    } tails[] = {
        {"", SP_OK, 0},
        {" \t\n\v\f\r", SP_OK, 0},
        {"\n\377\330\377\340", SP_E_NOTPNM, 1},
        {"x", SP_E_NOTPNM, 1},
        {"\nP", SP_E_NOTPNM, 1},
        {" P9", SP_E_NOTPNM, 1},
        {"\nP5 0 1 255\n", SP_E_BADHEADER, 1},
        {"\r\nP5 2 2 255\n\001", SP_E_TRUNCATED, 1},
    };
    const char *path = fx_path("in.pgm");

    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        for (int stream = 0; stream < 2; stream++) {
            char text[64], by[64];
            struct sp_input in;
            struct sp_load_info info;
            int more, fd = -1;

            snprintf(text, sizeof text, "P5 1 1 255\n\007%s", tails[i].tail);
            if (stream) {
                fd = text_pipe(text);
                snprintf(by, sizeof by, "/dev/fd/%d", fd);
            } else {
                fx_write_text(path, text);
            }
            ck_assert_int_eq(sp_input_open(&in, stream ? by : path, 0, NULL),
                             SP_OK);
            if (fd >= 0)
                close(fd);
            ck_assert_uint_eq(next_gray(&in, &more), 7);
            ck_assert_msg(more == tails[i].more, "tail %zu, %s", i,
                          stream ? "stream" : "file");
            if (more)
                ck_assert_int_eq(sp_input_next(&in, SP_IO_READ, NULL, NULL,
                                               &info),
                                 tails[i].more_st);
            sp_input_close(&in);
        }
    }
}
END_TEST

/* The buffer a caller passes to reuse: an image read into memory is
 * released into it, and the next one that fits is read into that very
 * buffer; a larger one takes a new buffer, which is then kept instead; a
 * mapped image leaves it alone. */
START_TEST(test_input_reuse)
{
    struct sp_reuse reuse = {NULL, 0};
    struct sp_load_info info;
    struct sp_input in;
    struct sp_image img;
    const char *small = fx_path("small.ppm"), *large = fx_path("large.ppm");
    unsigned char *kept;

    fx_make_image(&img, 20, 10, 3, 1, 255, 1);
    fx_write_image(small, &img);
    sp_image_release(&img);
    fx_make_image(&img, 40, 10, 3, 1, 255, 2);
    fx_write_image(large, &img);
    sp_image_release(&img);

    ck_assert_int_eq(sp_input_open(&in, small, 0, &reuse), SP_OK);
    ck_assert_int_eq(sp_input_next(&in, SP_IO_READ, NULL, NULL, &info),
                     SP_OK);
    kept = in.img.pixels;
    ck_assert_ptr_null(reuse.p);
    ck_assert_int_eq(sp_input_release(&in), SP_OK);
    ck_assert_ptr_eq(reuse.p, kept);
    ck_assert_uint_eq(reuse.len, 20 * 10 * 3);
    sp_input_close(&in);

    ck_assert_int_eq(sp_input_open(&in, small, 0, &reuse), SP_OK);
    ck_assert_int_eq(sp_input_next(&in, SP_IO_READ, NULL, NULL, &info),
                     SP_OK);
    ck_assert_ptr_eq(in.img.pixels, kept);  /* the same buffer */
    ck_assert_ptr_null(reuse.p);
    sp_input_close(&in);  /* the close releases it */
    ck_assert_ptr_eq(reuse.p, kept);

    ck_assert_int_eq(sp_input_open(&in, large, 0, &reuse), SP_OK);
    ck_assert_int_eq(sp_input_next(&in, SP_IO_READ, NULL, NULL, &info),
                     SP_OK);
    ck_assert_ptr_eq(reuse.p, kept);        /* too small: kept, not used */
    kept = in.img.pixels;
    sp_input_close(&in);
    ck_assert_ptr_eq(reuse.p, kept);        /* the larger one now */
    ck_assert_uint_eq(reuse.len, 40 * 10 * 3);

    ck_assert_int_eq(sp_input_open(&in, large, 0, &reuse), SP_OK);
    ck_assert_int_eq(sp_input_next(&in, SP_IO_MMAP, NULL, NULL, &info),
                     SP_OK);
    ck_assert_int_eq(info.io_used, SP_IO_MMAP);
    sp_input_close(&in);
    ck_assert_ptr_eq(reuse.p, kept);
    sp_reuse_drop(&reuse);
    ck_assert_ptr_null(reuse.p);
}
END_TEST

static Suite *load_suite(void)
{
    Suite *s = suite_create("load");
    TCase *tc = fx_tcase("paths");

    tcase_add_loop_test(tc, test_read_mmap_identical, 0,
                        sizeof formats / sizeof formats[0]);
    tcase_add_test(tc, test_pipe_and_stdin);
    tcase_add_test(tc, test_pipe_formats);
    tcase_add_test(tc, test_fifo);
    tcase_add_test(tc, test_stdin_file);
    tcase_add_test(tc, test_trailing);
    tcase_add_test(tc, test_odd_inputs);
    suite_add_tcase(s, tc);

    tc = fx_tcase("streams");
    tcase_add_test(tc, test_pipe_plain_stops);
    tcase_add_test(tc, test_pipe_plain_large);
    tcase_add_test(tc, test_pipe_plain_statuses);
    tcase_add_test(tc, test_accept_hook);
    tcase_add_test(tc, test_input_two_streams);
    tcase_add_test(tc, test_input_after_image);
    suite_add_tcase(s, tc);

    tc = fx_tcase("seam");
    tcase_add_test(tc, test_seam_eintr_short_reads);
    tcase_add_test(tc, test_seam_mmap_fails);
    tcase_add_test(tc, test_seam_errors);
    tcase_add_test(tc, test_shrink_read);
    tcase_add_test(tc, test_shrink_mmap);
    tcase_add_test(tc, test_grow_while_opened);
    tcase_add_test(tc, test_changed_while_read);
    tcase_add_test(tc, test_header_read_once);
    suite_add_tcase(s, tc);

    tc = fx_tcase("release");
    tcase_add_test(tc, test_release_idempotent);
    tcase_add_test(tc, test_release_seam);
    tcase_add_test(tc, test_no_leaks);
    tcase_add_test(tc, test_input_reuse);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_suite());
}
