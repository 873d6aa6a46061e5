/* The loader: open, take the size and stamp, parse and check the header,
 * ask the caller, pick the backend (the stream path: load_stream.c). */
#include "load.h"
#include "load_backend.h"

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
    static const char *const names[] = {"read", "mmap", "pread", "auto"};

    return io >= SP_IO_READ && io <= SP_IO_AUTO ? names[io] : "read";
}

/* A plain raster needs at least one digit and one separator a sample (but
 * the last), a plain PBM a digit a pixel (it needs no separators), so a
 * header cannot make us allocate far more than the input holds. */
size_t sp_load_raster_end(const struct sp_header *hdr)
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

sp_status sp_load_check_length(const struct sp_header *hdr, size_t input_bytes,
                              char *why)
{
    size_t off = (size_t)hdr->raster_offset;
    size_t have = input_bytes > off ? input_bytes - off : 0;
    struct sp_image type;

    if (input_bytes >= sp_load_raster_end(hdr))
        return SP_OK;
    sp_image_type_of(&type, hdr);
    snprintf(why, SP_WHY_MAX,
             "%zux%zu %s image needs %s%zu bytes of pixel data, file has %zu",
             hdr->width, hdr->height, sp_image_kind(&type),
             hdr->plain ? "at least " : "", sp_load_raster_end(hdr) - off,
             have);
    return SP_E_TRUNCATED;
}

int sp_load_is_magic(const unsigned char *p, size_t n)
{
    return n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7';
}

sp_status sp_load_decode_plain(FILE *f, const struct sp_header *hdr,
                              struct sp_image *img, off_t *end, char *why)
{
    unsigned char *buf = malloc(hdr->raster_bytes);
    sp_status st;

    if (buf == NULL)
        return ENOMEM;
    st = sp_header_decode_plain(f, hdr, buf, end, why);
    if (st != SP_OK)
        free(buf);
    else
        sp_image_adopt(img, SP_BACKING_MALLOC, buf, hdr->raster_bytes, hdr,
                       buf);
    return st;
}

sp_status sp_load_ask(const struct sp_accept *acc, const struct sp_header *hdr,
                     char *why)
{
    return acc->fn != NULL ? acc->fn(hdr, acc->arg, why) : SP_OK;
}

/* parse_file: the header at START of the file open on FD, parsed from a
 * source that ends at the size in STAMP, checked against that size and
 * accepted; a plain raster is decoded into IMG too, *END set past it. */
static sp_status parse_file(int fd, off_t start, const struct sp_stamp *stamp,
                            const struct sp_accept *acc, struct sp_header *hdr,
                            struct sp_image *img, off_t *end, char *why)
{
    struct sp_reader rd = {.fd = fd, .file = 1, .pos = start,
                           .end = stamp->size};
    sp_status st;
    FILE *f;

    f = sp_reader_open(&rd);
    if (f == NULL)
        return errno;
    st = sp_header_parse(f, hdr, why);
    if (st == SP_OK)
        st = sp_load_check_length(hdr, (size_t)stamp->size, why);
    if (st == SP_OK)
        st = sp_load_ask(acc, hdr, why);
    if (st == SP_OK && hdr->plain)
        st = sp_load_decode_plain(f, hdr, img, end, why);
    fclose(f);
    if (rd.error != 0 && st != SP_OK)
        st = rd.error;
    return st;
}

/* load_binary: HDR's binary raster by IO, from the file open on FD whose
 * size was taken as SIZE. */
static sp_status load_binary(int fd, size_t size, enum sp_io io,
                             const struct sp_header *hdr,
                             struct sp_image *img, struct sp_load_info *info)
{
    sp_status st = SP_OK;

    if (io == SP_IO_MMAP)
        st = sp_load_mmap(fd, size, hdr, img);
    else if (io == SP_IO_PREAD)
        st = sp_load_pread(fd, hdr, img);
    if (io != SP_IO_READ && st == SP_OK)
        info->io_used = io;
    /* A file the kernel will not map is read instead. */
    if (io == SP_IO_READ || st != SP_OK)
        st = sp_load_read(fd, hdr, img);
    return st;
}

/* load_file: the image at IN->pos of IN's regular file, whose size and
 * stamp were taken at open; IN->pos then goes past it. */
static sp_status load_file(struct sp_input *in, enum sp_io io,
                           const struct sp_accept *acc, struct sp_image *img,
                           struct sp_load_info *info)
{
    size_t size = (size_t)in->stamp.size;
    struct sp_header hdr;
    unsigned char next[2];
    off_t end = 0;
    sp_status st, now;

    info->io_used = SP_IO_READ;
    st = parse_file(in->fd, in->pos, &in->stamp, acc, &hdr, img, &end,
                    info->why);
    if (st == SP_OK && !hdr.plain) {
        end = hdr.raster_offset + (off_t)hdr.raster_bytes;
        st = load_binary(in->fd, size, io, &hdr, img, info);
    }
    /* Whether another image follows: read before the stamp is checked, so
     * that a file cut after the image is caught, not taken for its end. */
    info->trailing_bytes = st == SP_OK ? size - (size_t)end : 0;
    info->trailing_image =
        info->trailing_bytes >= 2 &&
        sp_sys.pread(in->fd, next, 2, end) == 2 && sp_load_is_magic(next, 2);
    /* The bytes read (or mapped, before any is touched) must be those of
     * the file whose size was taken; a load that failed on a file that
     * changed says so, not what its new bytes look like. */
    now = sp_stamp_check(in->fd, &in->stamp);
    if (st == SP_OK && now != SP_OK) {
        sp_image_release(img);
        st = now;
    } else if (st != SP_OK && now == SP_E_CHANGED) {
        info->why[0] = '\0';
        st = now;
    }
    if (st != SP_OK)
        return st;
    img->stamp = in->stamp;
    info->magic = hdr.magic;
    info->raster_offset = hdr.raster_offset;
    info->next = end;
    in->pos = end;
    return SP_OK;
}

size_t sp_load_space(const unsigned char *p, size_t n)
{
    size_t i = 0;

    /* isspace() in the C locale, whatever locale the program set */
    while (i < n && p[i] != '\0' && strchr(" \t\n\v\f\r", p[i]) != NULL)
        i++;
    return i;
}

sp_status sp_input_open(struct sp_input *in, const char *path, int nowait)
{
    int is_stdin = strcmp(path, "-") == 0;
    struct stat sb;
    sp_status st = SP_OK;
    int fl;

    memset(in, 0, sizeof *in);
    in->fd = is_stdin ? STDIN_FILENO
                      : sp_sys.open(path, O_RDONLY | O_CLOEXEC |
                                              (nowait ? O_NONBLOCK : 0));
    if (in->fd < 0)
        return errno;
    in->own = !is_stdin;
    /* O_NONBLOCK was for the open only (a FIFO's open waits for a writer
     * without it): reads wait for data, as they do on any stream. */
    if (in->own && nowait &&
        ((fl = fcntl(in->fd, F_GETFL)) < 0 ||
         fcntl(in->fd, F_SETFL, fl & ~O_NONBLOCK) != 0))
        st = errno;
    else if (sp_sys.fstat(in->fd, &sb) != 0)
        st = errno;
    else if (S_ISDIR(sb.st_mode))
        st = EISDIR;
    if (st == SP_OK && S_ISREG(sb.st_mode) && sb.st_size > 0) {
        /* The one size every check is made against. */
        in->file = 1;
        sp_stamp_of(&sb, &in->stamp);
        /* Not 0 when stdin is a file read in part. */
        in->pos = is_stdin ? sp_sys.lseek(in->fd, 0, SEEK_CUR) : 0;
        if (in->pos < 0)
            st = errno;
    }
    in->nowait = st == SP_OK && in->own && nowait && S_ISFIFO(sb.st_mode);
    if (st != SP_OK) {
        if (in->own)
            sp_sys.close(in->fd);
        in->fd = -1;
        in->own = 0;
    }
    return st;
}

sp_status sp_input_load(struct sp_input *in, enum sp_io io,
                        sp_accept_fn *accept, void *arg,
                        struct sp_image *img, struct sp_load_info *info)
{
    struct sp_accept acc = {accept, arg};
    sp_status st;

    memset(img, 0, sizeof *img);
    memset(info, 0, sizeof *info);
    info->io_used = io;
    if (in->file) {
        info->input_bytes = (size_t)in->stamp.size;
        st = load_file(in, io == SP_IO_AUTO ? SP_IO_PREAD : io, &acc, img,
                       info);
    } else {
        st = sp_load_stream(in->fd, &in->rest, &acc, img, info);
        if (st == SP_OK)
            in->pos += info->next;
        else if (st == SP_E_EMPTY && in->images == 0 && in->nowait)
            snprintf(info->why, SP_WHY_MAX,
                     "a FIFO with no writer (not waited for)");
    }
    if (st == SP_OK)
        in->images++;
    return st;
}

/* file_more: sp_input_more() of a regular file: pread from IN->pos. */
static sp_status file_more(struct sp_input *in, int *more)
{
    unsigned char buf[4096];
    off_t size = in->stamp.size;

    while (in->pos < size) {
        size_t want = size - in->pos < (off_t)sizeof buf
                          ? (size_t)(size - in->pos)
                          : sizeof buf;
        ssize_t n;
        size_t sp;

        do
            n = sp_sys.pread(in->fd, buf, want, in->pos);
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return errno;
        if (n == 0)
            return SP_E_CHANGED;  /* shorter than when it was opened */
        sp = sp_load_space(buf, (size_t)n);
        in->pos += (off_t)sp;
        in->skipped += sp;
        if (sp < (size_t)n) {
            *more = 1;
            return SP_OK;
        }
    }
    /* The end of the file as opened, if what was read after the image
     * says so: only if they are still that file's bytes. */
    return in->skipped > 0 ? sp_stamp_check(in->fd, &in->stamp) : SP_OK;
}

sp_status sp_input_more(struct sp_input *in, int *more)
{
    sp_status st;
    size_t skipped = 0;

    *more = 0;
    in->skipped = 0;
    if (in->file)
        return file_more(in, more);
    st = sp_load_stream_skip(in->fd, &in->rest, &skipped, more);
    in->skipped = skipped;
    in->pos += (off_t)skipped;
    return st;
}

void sp_input_close(struct sp_input *in)
{
    free(in->rest.buf);
    in->rest = (struct sp_inbuf){NULL, 0, 0, 0};
    if (in->own)
        sp_sys.close(in->fd);
    else if (in->file)  /* a shared stdin: just past what was read */
        (void)sp_sys.lseek(in->fd, in->pos, SEEK_SET);
    in->fd = -1;
    in->own = 0;
}

sp_status sp_load_checked(const char *path, enum sp_io io,
                          sp_accept_fn *accept, void *arg,
                          struct sp_image *img, struct sp_load_info *info)
{
    struct sp_input in;
    sp_status st = sp_input_open(&in, path, 0);

    if (st != SP_OK) {
        memset(img, 0, sizeof *img);
        memset(info, 0, sizeof *info);
        info->io_used = io;
        return st;
    }
    st = sp_input_load(&in, io, accept, arg, img, info);
    sp_input_close(&in);
    return st;
}

sp_status sp_load(const char *path, enum sp_io io, struct sp_image *img,
                  struct sp_load_info *info)
{
    return sp_load_checked(path, io, NULL, NULL, img, info);
}
