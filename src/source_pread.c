/* The pread backend: the raster stays in the file, and each request reads
 * its rows into the caller's scratch with pread(), so that threads read
 * their rows at once, no copy of the raster is ever whole in memory and
 * nothing is mapped.  A request whose bytes are not in the page cache
 * asks for readahead of what follows.  The release closes the file. */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>

#include "sys.h"

/* READ_AHEAD: how much a read that finds its bytes not in the page cache
 * asks the kernel to read ahead. */
#define READ_AHEAD ((off_t)8 << 20)

/* read_at: up to LEN bytes of IMG's file at AT into BUF.  The rows a
 * reduce reads lie apart, which the kernel's readahead takes for random
 * reads and does not read ahead for.  So the read first asks not to wait
 * (RWF_NOWAIT: nothing more when the bytes are cached); when they are
 * not, it asks for the next READ_AHEAD bytes at once, as one large read
 * would get them. */
static ssize_t read_at(const struct sp_image *img, unsigned char *buf,
                       size_t len, off_t at)
{
    struct iovec v = {buf, len};
    ssize_t n = sp_sys.preadv2(img->fd, &v, 1, at, RWF_NOWAIT);

    if (n >= 0 || errno == EINTR)
        return n;
    if (errno == EAGAIN)
        (void)sp_sys.fadvise(img->fd, at, READ_AHEAD, POSIX_FADV_WILLNEED);
    return sp_sys.pread(img->fd, buf, len, at);
}

/* rows: rows [Y0, Y1) into SCRATCH; SP_E_CHANGED when the file ends
 * before them (it shrank after it was checked). */
static const unsigned char *rows(struct sp_source *s, size_t y0, size_t y1,
                                 unsigned char *scratch, sp_status *st)
{
    const struct sp_image *img = &s->img;
    size_t len = (y1 - y0) * img->stride, done = 0;
    off_t at = (off_t)img->offset + (off_t)(y0 * img->stride);

    while (done < len) {
        ssize_t n = read_at(img, scratch + done, len - done,
                            at + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *st = n < 0 ? errno : SP_E_CHANGED;
            return NULL;
        }
        done += (size_t)n;
    }
    return scratch;
}

static size_t scratch(const struct sp_source *s, size_t n)
{
    return n * s->img.stride;
}

const struct sp_source_ops sp_source_pread = {
    .rows = rows,
    .scratch = scratch,
    .done_before = sp_source_keep,
    .guard = sp_source_unguarded,
};
