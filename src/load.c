/* The loader: open, parse and check the header, pick the backend. */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"

const char *sp_io_name(enum sp_io io)
{
    return io == SP_IO_MMAP ? "mmap" : "read";
}

void sp_image_view(struct sp_image *img, const struct sp_header *hdr,
                   unsigned char *raster)
{
    img->pixels = raster;
    img->width = hdr->width;
    img->height = hdr->height;
    img->channels = hdr->channels;
    img->bytes = hdr->bytes;
    img->maxval = hdr->maxval;
    img->stride = hdr->width * hdr->channels * hdr->bytes;
}

/* check_length: is the input long enough for the raster HDR promises?
 * A plain raster needs at least one digit and one separator per sample
 * (but the last), so a header cannot make us allocate far more than the
 * file holds. */
static sp_status check_length(const struct sp_header *hdr, size_t input_bytes,
                              char *why)
{
    size_t have = input_bytes - (size_t)hdr->raster_offset;
    size_t need = hdr->raster_bytes;

    if (hdr->plain) {
        size_t samples = hdr->raster_bytes / hdr->bytes;
        need = samples > (SIZE_MAX - 1) / 2 ? SIZE_MAX : 2 * samples - 1;
    }
    if (have >= need)
        return SP_OK;
    snprintf(why, SP_WHY_MAX,
             "%zux%zu %s image needs %s%zu bytes of pixel data, file has %zu",
             hdr->width, hdr->height, hdr->channels == 3 ? "color" : "gray",
             hdr->plain ? "at least " : "", need, have);
    return SP_E_TRUNCATED;
}

static int is_magic(const unsigned char *p, size_t n)
{
    return n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7';
}

/* decode_plain: decode F's plain raster into a fresh malloc'd IMG. */
static sp_status decode_plain(FILE *f, const struct sp_header *hdr,
                              struct sp_image *img, off_t *end, char *why)
{
    unsigned char *buf = malloc(hdr->raster_bytes);
    sp_status st;

    if (buf == NULL)
        return ENOMEM;
    st = sp_header_decode_plain(f, hdr, buf, end, why);
    if (st != SP_OK) {
        free(buf);
        return st;
    }
    img->backing = SP_BACKING_MALLOC;
    img->base = buf;
    img->base_len = hdr->raster_bytes;
    sp_image_view(img, hdr, buf);
    return SP_OK;
}

/* load_file: a regular file of SIZE > 0 bytes open on FD. */
static sp_status load_file(int fd, size_t size, enum sp_io io,
                           struct sp_image *img, struct sp_load_info *info)
{
    struct sp_header hdr;
    unsigned char next[2];
    off_t end = 0;
    sp_status st;
    FILE *f;
    int fd2 = fcntl(fd, F_DUPFD_CLOEXEC, 0);

    if (fd2 < 0)
        return errno;
    f = fdopen(fd2, "rb");
    if (f == NULL) {
        st = errno;
        close(fd2);
        return st;
    }
    st = sp_header_parse(f, &hdr, info->why);
    if (st == SP_OK)
        st = check_length(&hdr, size, info->why);
    if (st == SP_OK && hdr.plain)
        st = decode_plain(f, &hdr, img, &end, info->why);
    fclose(f);
    if (st != SP_OK)
        return st;

    info->magic = hdr.magic;
    info->raster_offset = hdr.raster_offset;
    info->io_used = SP_IO_READ;
    if (!hdr.plain) {
        end = hdr.raster_offset + (off_t)hdr.raster_bytes;
        if (io == SP_IO_MMAP) {
            st = sp_load_mmap(fd, size, &hdr, img);
            if (st == SP_OK)
                info->io_used = SP_IO_MMAP;
        }
        /* A file the kernel will not map is read instead. */
        if (io == SP_IO_READ || st != SP_OK)
            st = sp_load_read(fd, &hdr, img);
        if (st != SP_OK)
            return st;
    }
    info->trailing_bytes = size - (size_t)end;
    info->trailing_image =
        info->trailing_bytes >= 2 &&
        sp_sys.pread(fd, next, 2, end) == 2 && is_magic(next, 2);
    return SP_OK;
}

/* slurp: read all of FD into a malloc'd buffer *BUF of *LEN bytes. */
static sp_status slurp(int fd, unsigned char **buf, size_t *len)
{
    size_t cap = 1 << 16, used = 0;
    unsigned char *p = malloc(cap);

    if (p == NULL)
        return ENOMEM;
    for (;;) {
        size_t got;
        sp_status st;

        if (used == cap) {
            unsigned char *q = cap > SIZE_MAX / 2 ? NULL : realloc(p, cap * 2);
            if (q == NULL) {
                free(p);
                return ENOMEM;
            }
            p = q;
            cap *= 2;
        }
        st = sp_read_full(fd, p + used, cap - used, &got);
        if (st != SP_OK) {
            free(p);
            return st;
        }
        used += got;
        if (used < cap)
            break;
    }
    *buf = p;
    *len = used;
    return SP_OK;
}

/* load_stream: anything that is not a regular file with a size: read it
 * whole, then parse it in memory. */
static sp_status load_stream(int fd, struct sp_image *img,
                             struct sp_load_info *info)
{
    struct sp_header hdr;
    unsigned char *buf;
    size_t len;
    off_t end = 0;
    sp_status st;
    FILE *f;

    st = slurp(fd, &buf, &len);
    if (st != SP_OK)
        return st;
    if (len == 0) {
        free(buf);
        return SP_E_EMPTY;
    }
    f = fmemopen(buf, len, "rb");
    if (f == NULL) {
        st = errno;
        free(buf);
        return st;
    }
    st = sp_header_parse(f, &hdr, info->why);
    if (st == SP_OK)
        st = check_length(&hdr, len, info->why);
    if (st == SP_OK && hdr.plain)
        st = decode_plain(f, &hdr, img, &end, info->why);
    fclose(f);
    if (st == SP_OK) {
        if (!hdr.plain)
            end = hdr.raster_offset + (off_t)hdr.raster_bytes;
        info->magic = hdr.magic;
        info->raster_offset = hdr.raster_offset;
        info->io_used = SP_IO_READ;
        info->input_bytes = len;
        info->trailing_bytes = len - (size_t)end;
        info->trailing_image = is_magic(buf + end, len - (size_t)end);
    }
    if (st != SP_OK || hdr.plain) {
        free(buf);
        return st;
    }
    img->backing = SP_BACKING_MALLOC;
    img->base = buf;
    img->base_len = len;
    sp_image_view(img, &hdr, buf + hdr.raster_offset);
    return SP_OK;
}

sp_status sp_load(const char *path, enum sp_io io, struct sp_image *img,
                  struct sp_load_info *info)
{
    struct stat st_buf;
    int is_stdin = strcmp(path, "-") == 0;
    int fd;
    sp_status st;

    memset(img, 0, sizeof *img);
    memset(info, 0, sizeof *info);
    info->io_used = io;
    fd = is_stdin ? STDIN_FILENO : sp_sys.open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    if (sp_sys.fstat(fd, &st_buf) != 0) {
        st = errno;
    } else if (S_ISDIR(st_buf.st_mode)) {
        st = EISDIR;
    } else if (S_ISREG(st_buf.st_mode) && st_buf.st_size > 0) {
        info->input_bytes = (size_t)st_buf.st_size;
        st = load_file(fd, (size_t)st_buf.st_size, io, img, info);
    } else {
        st = load_stream(fd, img, info);
    }
    if (!is_stdin)
        sp_sys.close(fd);
    return st;
}
