/* sppipe: the floor of writing an image into a pipe (run_experiments.sh
 * --suite threads): what the kernel's part costs when nothing is scaled.
 *   sppipe [--write] BYTES ROW
 *       write BYTES to standard output, a pipe, as rows of ROW bytes
 *       taken in turn from a ring of buffers larger than the pipe (made
 *       1 MiB with F_SETPIPE_SZ, as scaleppm makes it): with vmsplice()
 *       (the pipe takes the ring's pages), or with writev() (--write: the
 *       kernel copies them).  The bytes are meaningless: the ring is
 *       written once, before, and reused while a reader may still see its
 *       pages, which scaleppm never does.  Exits 1, with one line on
 *       stderr, on a usage error or a failed call. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sys.h"

/* RING: the ring's bytes, 8 times the pipe's 1 MiB. */
#define RING ((size_t)8 << 20)
#define BATCH 256

static int usage(void)
{
    fprintf(stderr, "usage: sppipe [--write] BYTES ROW\n");
    return 1;
}

int main(int argc, char **argv)
{
    int copy = argc > 1 && strcmp(argv[1], "--write") == 0;
    unsigned long long total, row;
    struct iovec iov[BATCH];
    unsigned char *ring;
    size_t at = 0;
    char *end;

    if (argc != 3 + copy)
        return usage();
    total = strtoull(argv[1 + copy], &end, 10);
    if (*end != '\0' || total == 0)
        return usage();
    row = strtoull(argv[2 + copy], &end, 10);
    if (*end != '\0' || row == 0 || row > RING / 2)
        return usage();
    ring = malloc(RING);
    if (ring == NULL) {
        fprintf(stderr, "sppipe: %s\n", strerror(ENOMEM));
        return 1;
    }
    memset(ring, 0x5a, RING);
    (void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
    while (total > 0) {
        size_t n = 0;
        sp_status st;

        for (; n < BATCH && total > 0; n++) {
            size_t len = total < row ? (size_t)total : (size_t)row;

            if (at + len > RING)
                at = 0;
            iov[n].iov_base = ring + at;
            iov[n].iov_len = len;
            at += len;
            total -= len;
        }
        st = copy ? sp_sys_writev_full(STDOUT_FILENO, iov, n)
                  : sp_sys_vmsplice_full(STDOUT_FILENO, iov, n);
        if (st != SP_OK) {
            fprintf(stderr, "sppipe: %s\n", strerror(st));
            return 1;
        }
    }
    free(ring);
    return 0;
}
