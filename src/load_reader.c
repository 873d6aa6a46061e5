/* The loader's byte reader: the input as a FILE* for the header parser
 * and the plain decoder, read only as far as they ask.  A regular file is
 * read with pread() at the stream's position and never at or past the
 * size taken when it was opened; a stream gives the bytes already
 * buffered, then what read() brings, and only goes forward. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "load_backend.h"
#include "sys.h"

static ssize_t pread_some(struct sp_reader *rd, void *buf, size_t len)
{
    ssize_t n;

    if ((off_t)len > rd->end - rd->pos)
        len = (size_t)(rd->end - rd->pos);
    do
        n = sp_sys.pread(rd->fd, buf, len, rd->pos);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        rd->error = errno;
    return n;
}

/* The first block read is kept, and read again from memory: the parser
 * reads the header's start twice (the magic number, then libnetpbm from
 * the start again, and the plain decoder a third time), and must see the
 * same bytes each time, whatever is written to the file in between. */
static ssize_t file_read(struct sp_reader *rd, char *buf, size_t len)
{
    ssize_t n;

    if (rd->pos >= rd->end)
        return 0;
    if (!rd->kept) {
        n = pread_some(rd, rd->block, sizeof rd->block);
        if (n < 0)
            return n;
        rd->kept = 1;
        rd->block_at = rd->pos;
        rd->block_len = (size_t)n;
    }
    if (rd->pos >= rd->block_at &&
        rd->pos < rd->block_at + (off_t)rd->block_len) {
        size_t at = (size_t)(rd->pos - rd->block_at);

        n = (ssize_t)(len < rd->block_len - at ? len
                                                : rd->block_len - at);
        memcpy(buf, rd->block + at, (size_t)n);
    } else {
        n = pread_some(rd, buf, len);
    }
    if (n > 0)
        rd->pos += n;
    return n;
}

static ssize_t stream_read(struct sp_reader *rd, char *buf, size_t len)
{
    ssize_t n;

    if ((size_t)rd->pos < rd->head_len) {
        size_t have = rd->head_len - (size_t)rd->pos;

        n = (ssize_t)(len < have ? len : have);
        memcpy(buf, rd->head + rd->pos, (size_t)n);
        rd->pos += n;
        return n;
    }
    if (rd->stop || rd->eof)
        return 0;
    do
        n = sp_sys.read(rd->fd, buf, len);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        rd->error = errno;
        return n;
    }
    rd->eof = n == 0;
    rd->taken += (size_t)n;
    rd->pos += n;
    return n;
}

static ssize_t source_read(void *cookie, char *buf, size_t len)
{
    struct sp_reader *rd = cookie;

    return rd->file ? file_read(rd, buf, len) : stream_read(rd, buf, len);
}

/* A file seeks anywhere; a stream only within its buffered bytes, and
 * only until read() has given more (or to where it already is). */
static int source_seek(void *cookie, off64_t *off, int whence)
{
    struct sp_reader *rd = cookie;
    off64_t to = whence == SEEK_SET   ? *off
                 : whence == SEEK_CUR ? rd->pos + *off
                 : rd->file          ? rd->end + *off
                                      : -1;

    if (to < 0 || (!rd->file && to != rd->pos &&
                   (rd->taken > 0 || (size_t)to > rd->head_len))) {
        errno = rd->file ? EINVAL : ESPIPE;
        return -1;
    }
    rd->pos = (off_t)to;
    *off = to;
    return 0;
}

static int source_close(void *cookie)
{
    (void)cookie;  /* the descriptor is the loader's */
    return 0;
}

FILE *sp_reader_open(struct sp_reader *rd)
{
    static const cookie_io_functions_t io = {
        .read = source_read,
        .seek = source_seek,
        .close = source_close,
    };

    return fopencookie(rd, "rb", io);
}
