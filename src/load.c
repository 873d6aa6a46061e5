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

/* parse_file: the header of the file open on FD, parsed from a source
 * that ends at the size in STAMP, checked against that size and accepted;
 * a plain raster is decoded into IMG too, *END set past it. */
static sp_status parse_file(int fd, const struct sp_stamp *stamp,
                            const struct sp_accept *acc, struct sp_header *hdr,
                            struct sp_image *img, off_t *end, char *why)
{
    struct sp_reader rd = {.fd = fd, .file = 1, .end = stamp->size};
    sp_status st;
    FILE *f;

    /* Not 0 when stdin is a file read in part. */
    rd.pos = sp_sys.lseek(fd, 0, SEEK_CUR);
    if (rd.pos < 0)
        return errno;
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

/* load_file: a regular file open on FD whose size and stamp the fstat
 * after open gave, the image starting at FD's offset. */
static sp_status load_file(int fd, const struct sp_stamp *stamp,
                           enum sp_io io, const struct sp_accept *acc,
                           struct sp_image *img, struct sp_load_info *info)
{
    size_t size = (size_t)stamp->size;
    struct sp_header hdr;
    unsigned char next[2];
    off_t end = 0;
    sp_status st, now;

    info->io_used = SP_IO_READ;
    st = parse_file(fd, stamp, acc, &hdr, img, &end, info->why);
    if (st == SP_OK && !hdr.plain) {
        end = hdr.raster_offset + (off_t)hdr.raster_bytes;
        st = load_binary(fd, size, io, &hdr, img, info);
    }
    /* Whether another image follows: read before the stamp is checked, so
     * that a file cut after the image is caught, not taken for its end. */
    info->trailing_bytes = st == SP_OK ? size - (size_t)end : 0;
    info->trailing_image =
        info->trailing_bytes >= 2 &&
        sp_sys.pread(fd, next, 2, end) == 2 && sp_load_is_magic(next, 2);
    /* The bytes read (or mapped, before any is touched) must be those of
     * the file whose size was taken; a load that failed on a file that
     * changed says so, not what its new bytes look like. */
    now = sp_stamp_check(fd, stamp);
    if (st == SP_OK && now != SP_OK) {
        sp_image_release(img);
        st = now;
    } else if (st != SP_OK && now == SP_E_CHANGED) {
        info->why[0] = '\0';
        st = now;
    }
    if (st != SP_OK)
        return st;
    img->stamp = *stamp;
    info->magic = hdr.magic;
    info->raster_offset = hdr.raster_offset;
    info->next = end;
    return SP_OK;
}

sp_status sp_load_checked(const char *path, enum sp_io io,
                          sp_accept_fn *accept, void *arg,
                          struct sp_image *img, struct sp_load_info *info)
{
    return sp_load_at(path, 0, io, accept, arg, img, info);
}

sp_status sp_load_at(const char *path, off_t start, enum sp_io io,
                     sp_accept_fn *accept, void *arg, struct sp_image *img,
                     struct sp_load_info *info)
{
    struct sp_accept acc = {accept, arg};
    struct sp_stamp stamp;
    struct stat sb;
    int is_stdin = strcmp(path, "-") == 0;
    int fd;
    sp_status st;

    memset(img, 0, sizeof *img);
    memset(info, 0, sizeof *info);
    info->io_used = io;
    fd = is_stdin ? STDIN_FILENO : sp_sys.open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    if (sp_sys.fstat(fd, &sb) != 0) {
        st = errno;
    } else if (S_ISDIR(sb.st_mode)) {
        st = EISDIR;
    } else if (S_ISREG(sb.st_mode) && sb.st_size > 0) {
        /* The one size every check is made against. */
        sp_stamp_of(&sb, &stamp);
        info->input_bytes = (size_t)sb.st_size;
        if (io == SP_IO_AUTO)
            io = SP_IO_PREAD;
        st = SP_OK;
        if (!is_stdin && start > 0 &&
            sp_sys.lseek(fd, start, SEEK_SET) != start)
            st = errno ? errno : EIO;
        if (st == SP_OK)
            st = load_file(fd, &stamp, io, &acc, img, info);
        /* Leave a shared stdin just past the image, as netpbm does. */
        if (st == SP_OK && is_stdin)
            (void)sp_sys.lseek(fd, (off_t)(info->input_bytes -
                                           info->trailing_bytes), SEEK_SET);
    } else {
        st = sp_load_stream(fd, start > 0, &acc, img, info);
    }
    if (!is_stdin)
        sp_sys.close(fd);
    return st;
}

sp_status sp_load(const char *path, enum sp_io io, struct sp_image *img,
                  struct sp_load_info *info)
{
    return sp_load_checked(path, io, NULL, NULL, img, info);
}
