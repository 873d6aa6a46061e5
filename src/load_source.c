/* The loader's byte sources: the input as a FILE* for the header parser
 * and the plain decoder, read only as far as they ask.  A regular file is
 * read with pread() at the stream's position and never at or past the
 * size taken when it was opened; a stream gives the bytes already
 * buffered, then what read() brings, and only goes forward. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "sys.h"

static ssize_t pread_some(struct sp_source *src, void *buf, size_t len)
{
    ssize_t n;

    if ((off_t)len > src->end - src->pos)
        len = (size_t)(src->end - src->pos);
    do
        n = sp_sys.pread(src->fd, buf, len, src->pos);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        src->error = errno;
    return n;
}

/* The first block read is kept, and read again from memory: the parser
 * reads the header's start twice (the magic number, then libnetpbm from
 * the start again, and the plain decoder a third time), and must see the
 * same bytes each time, whatever is written to the file in between. */
static ssize_t file_read(struct sp_source *src, char *buf, size_t len)
{
    ssize_t n;

    if (src->pos >= src->end)
        return 0;
    if (!src->kept) {
        n = pread_some(src, src->block, sizeof src->block);
        if (n < 0)
            return n;
        src->kept = 1;
        src->block_at = src->pos;
        src->block_len = (size_t)n;
    }
    if (src->pos >= src->block_at &&
        src->pos < src->block_at + (off_t)src->block_len) {
        size_t at = (size_t)(src->pos - src->block_at);

        n = (ssize_t)(len < src->block_len - at ? len
                                                : src->block_len - at);
        memcpy(buf, src->block + at, (size_t)n);
    } else {
        n = pread_some(src, buf, len);
    }
    if (n > 0)
        src->pos += n;
    return n;
}

static ssize_t stream_read(struct sp_source *src, char *buf, size_t len)
{
    ssize_t n;

    if ((size_t)src->pos < src->head_len) {
        size_t have = src->head_len - (size_t)src->pos;

        n = (ssize_t)(len < have ? len : have);
        memcpy(buf, src->head + src->pos, (size_t)n);
        src->pos += n;
        return n;
    }
    if (src->stop || src->eof)
        return 0;
    do
        n = sp_sys.read(src->fd, buf, len);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        src->error = errno;
        return n;
    }
    src->eof = n == 0;
    src->taken += (size_t)n;
    src->pos += n;
    return n;
}

static ssize_t source_read(void *cookie, char *buf, size_t len)
{
    struct sp_source *src = cookie;

    return src->file ? file_read(src, buf, len) : stream_read(src, buf, len);
}

/* A file seeks anywhere; a stream only within its buffered bytes, and
 * only until read() has given more (or to where it already is). */
static int source_seek(void *cookie, off64_t *off, int whence)
{
    struct sp_source *src = cookie;
    off64_t to = whence == SEEK_SET   ? *off
                 : whence == SEEK_CUR ? src->pos + *off
                 : src->file          ? src->end + *off
                                      : -1;

    if (to < 0 || (!src->file && to != src->pos &&
                   (src->taken > 0 || (size_t)to > src->head_len))) {
        errno = src->file ? EINVAL : ESPIPE;
        return -1;
    }
    src->pos = (off_t)to;
    *off = to;
    return 0;
}

static int source_close(void *cookie)
{
    (void)cookie;  /* the descriptor is the loader's */
    return 0;
}

FILE *sp_source_open(struct sp_source *src)
{
    static const cookie_io_functions_t io = {
        .read = source_read,
        .seek = source_seek,
        .close = source_close,
    };

    return fopencookie(src, "rb", io);
}
