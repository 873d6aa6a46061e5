/* What input.c and the load paths share (input_path.h): the calls of a
 * raster in memory, the checks of a header against its input, and the
 * byte reader: the input as a FILE* for the header parser, and as the
 * plain decoder's pull, read only as far as they ask.  A regular file is read with
 * pread() at the stream's position and never at or past the size taken
 * when it was opened; a stream gives the bytes already buffered, then what
 * read() brings, and only goes forward. */
#include "input.h"
#include "input_path.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys.h"

/* ---- a raster in memory ---- */

const unsigned char *sp_input_in_place(struct sp_input *in, size_t y0,
                                       size_t y1, unsigned char *scratch,
                                       sp_status *st)
{
    (void)y1;
    (void)scratch;
    (void)st;
    return in->img.pixels + y0 * in->img.stride;
}

size_t sp_input_no_scratch(const struct sp_input *in, size_t rows)
{
    (void)in;
    (void)rows;
    return 0;
}

void sp_input_keep(struct sp_input *in, size_t y)
{
    (void)in;
    (void)y;
}

sp_status sp_input_unguarded(sp_status (*fn)(void *arg), void *arg)
{
    return fn(arg);
}

sp_status sp_input_unchanged(const struct sp_input *in)
{
    (void)in;  /* checked when it was read */
    return SP_OK;
}

sp_status sp_input_free(struct sp_input *in)
{
    sp_reuse_give(in->reuse, in->held.p, in->held.len);
    return SP_OK;
}

/* ---- the stamp of a file ---- */

void sp_stamp_of(const struct stat *sb, struct sp_stamp *stamp)
{
    stamp->dev = sb->st_dev;
    stamp->ino = sb->st_ino;
    stamp->size = sb->st_size;
    stamp->mtime_ns = sb->st_mtim.tv_sec * 1000000000LL + sb->st_mtim.tv_nsec;
    stamp->ctime_ns = sb->st_ctim.tv_sec * 1000000000LL + sb->st_ctim.tv_nsec;
    stamp->nlink = sb->st_nlink;
}

sp_status sp_stamp_check(int fd, const struct sp_stamp *was)
{
    struct stat sb;
    struct sp_stamp now;

    if (sp_sys.fstat(fd, &sb) != 0)
        return errno;
    sp_stamp_of(&sb, &now);
    return now.dev == was->dev && now.ino == was->ino &&
                   now.size == was->size && now.mtime_ns == was->mtime_ns &&
                   (now.ctime_ns == was->ctime_ns || now.nlink != was->nlink)
               ? SP_OK
               : SP_E_CHANGED;
}

sp_status sp_input_stamp_check(const struct sp_input *in)
{
    return in->mem != NULL ? SP_OK : sp_stamp_check(in->fd, &in->stamp);
}

ssize_t sp_input_read_at(const struct sp_input *in, void *buf, size_t len,
                       off_t at)
{
    if (in->mem == NULL)
        return sp_sys_pread_some(in->fd, buf, len, at);
    if (at >= in->stamp.size)
        return 0;
    if ((off_t)len > in->stamp.size - at)
        len = (size_t)(in->stamp.size - at);
    memcpy(buf, in->mem + at, len);
    return (ssize_t)len;
}

void sp_input_hold(struct sp_input *in, const struct sp_header *hdr, void *p,
                   size_t len, unsigned char *raster)
{
    memset(&in->img, 0, sizeof in->img);
    sp_image_type_of(&in->img, hdr);
    in->img.pixels = raster;
    in->held.p = p;
    in->held.len = len;
    in->held.done = 0;
}

/* ---- a header against its input ---- */

/* A plain raster needs at least one digit and one separator a sample (but
 * the last), a plain PBM a digit a pixel (it needs no separators), so a
 * header cannot make us allocate far more than the input holds. */
size_t sp_input_raster_end(const struct sp_header *hdr)
{
    size_t need = hdr->raster_bytes, end;

    if (hdr->plain && hdr->packed) {
        if (__builtin_mul_overflow(hdr->width, hdr->height, &need))
            need = SIZE_MAX;
    } else if (hdr->plain) {
        size_t samples = hdr->raster_bytes / hdr->sample_size;
        need = samples > (SIZE_MAX - 1) / 2 ? SIZE_MAX : 2 * samples - 1;
    }
    if (__builtin_add_overflow((size_t)hdr->raster_offset, need, &end))
        return SIZE_MAX;
    return end;
}

sp_status sp_input_check_length(const struct sp_header *hdr,
                                size_t input_bytes, char *why)
{
    size_t off = (size_t)hdr->raster_offset;
    size_t have = input_bytes > off ? input_bytes - off : 0;
    struct sp_image type;

    if (input_bytes >= sp_input_raster_end(hdr))
        return SP_OK;
    sp_image_type_of(&type, hdr);
    snprintf(why, SP_WHY_MAX,
             "%zux%zu %s image needs %s%zu bytes of pixel data, file has %zu",
             hdr->width, hdr->height, sp_image_kind(&type),
             hdr->plain ? "at least " : "", sp_input_raster_end(hdr) - off,
             have);
    return SP_E_TRUNCATED;
}

int sp_input_is_magic(const unsigned char *p, size_t n)
{
    return n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7';
}

size_t sp_input_space(const unsigned char *p, size_t n)
{
    size_t i = 0;

    /* isspace() in the C locale, whatever locale the program set */
    while (i < n && p[i] != '\0' && strchr(" \t\n\v\f\r", p[i]) != NULL)
        i++;
    return i;
}

sp_status sp_input_ask(const struct sp_accept *acc, struct sp_header *hdr,
                       char *why)
{
    return acc->fn != NULL ? acc->fn(hdr, acc->arg, why) : SP_OK;
}

/* ---- the byte reader ---- */

static ssize_t pread_some(struct sp_reader *rd, void *buf, size_t len)
{
    ssize_t n;

    if ((off_t)len > rd->end - rd->pos)
        len = (size_t)(rd->end - rd->pos);
    if (rd->mem != NULL) {
        memcpy(buf, rd->mem + rd->pos, len);
        return (ssize_t)len;
    }
    n = sp_sys_pread_some(rd->fd, buf, len, rd->pos);
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
    n = sp_sys_read_some(rd->fd, buf, len);
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
    (void)cookie;  /* the descriptor is the input's */
    return 0;
}

ssize_t sp_reader_pull(void *rd, unsigned char *buf, size_t cap)
{
    return source_read(rd, (char *)buf, cap);
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
