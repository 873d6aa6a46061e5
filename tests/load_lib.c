/* load_lib.c: what the loader's suites (test_load_*.c) share: their
 * includes, a plain file written, a pipe fed by a child and loaded, and the
 * count of mmap calls. */
#include "load_lib.h"

/* write_plain: IMG as a P2/P3 file, with lines of varying length and a
 * comment in the raster. */
void write_plain(const char *path, const struct sp_image *img)
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

pid_t feed(int fd, const void *data, size_t len)
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
void to_stdin(int fd)
{
    if (fd != STDIN_FILENO) {
        ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
        close(fd);
    }
}

void reap(pid_t pid)
{
    int status;

    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
}

/* load_pipe: load DATA through a pipe named /dev/fd/N (or stdin when
 * STDIN is set) asking for IO.  Returns the status. */
sp_status load_pipe(const void *data, size_t len, int as_stdin,
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
unsigned mmap_calls;
