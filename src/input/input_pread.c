/* The pread path: the raster stays in the file, and each request reads
 * its rows into the caller's scratch with pread(), so that threads read
 * their rows at once, no copy of the raster is ever whole in memory and
 * nothing is mapped.  A request whose bytes are not in the page cache
 * asks for readahead of what follows.  The rows are read through the
 * input's descriptor, whose file's stamp the check compares; the release
 * has nothing to give back. */
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>

#include "input.h"
#include "input_path.h"
#include "sys.h"

static sp_status load(struct sp_input *in, const struct sp_header *hdr)
{
    sp_input_hold(in, hdr, NULL, 0, NULL);
    in->held.at = hdr->raster_offset;
    return SP_OK;
}

/* READ_AHEAD: how much a read that finds its bytes not in the page cache
 * asks the kernel to read ahead. */
#define READ_AHEAD ((off_t)8 << 20)

/* read_at: up to LEN bytes of FD at AT into BUF.  The rows a reduce reads
 * lie apart, which the kernel's readahead takes for random reads and does
 * not read ahead for.  So the read first asks not to wait (RWF_NOWAIT:
 * nothing more when the bytes are cached); when they are not, it asks for
 * the next READ_AHEAD bytes at once, as one large read would get them. */
static ssize_t read_at(int fd, unsigned char *buf, size_t len, off_t at)
{
    struct iovec v = {buf, len};
    ssize_t n = sp_sys.preadv2(fd, &v, 1, at, RWF_NOWAIT);

    if (n >= 0)
        return n;
    if (errno == EAGAIN)
        (void)sp_sys.fadvise(fd, at, READ_AHEAD, POSIX_FADV_WILLNEED);
    return sp_sys_pread_some(fd, buf, len, at);
}

/* rows: rows [Y0, Y1) into SCRATCH; SP_E_CHANGED when the file ends
 * before them (it shrank after it was checked). */
static const unsigned char *rows(struct sp_input *in, size_t y0, size_t y1,
                                 unsigned char *scratch, sp_status *st)
{
    size_t stride = in->img.stride, len = (y1 - y0) * stride, done = 0;
    off_t at = in->held.at + (off_t)(y0 * stride);

    while (done < len) {
        ssize_t n = read_at(in->fd, scratch + done, len - done,
                            at + (off_t)done);
        if (n <= 0) {
            *st = n < 0 ? errno : SP_E_CHANGED;
            return NULL;
        }
        done += (size_t)n;
    }
    return scratch;
}

static size_t scratch(const struct sp_input *in, size_t n)
{
    return n * in->img.stride;
}

static sp_status release(struct sp_input *in)
{
    (void)in;  /* the descriptor is the input's */
    return SP_OK;
}

const struct sp_input_path sp_input_pread = {
    .io = SP_IO_PREAD,
    .load = load,
    .rows = rows,
    .scratch = scratch,
    .done_before = sp_input_keep,
    .guard = sp_input_unguarded,
    .check = sp_input_stamp_check,
    .release = release,
};
