/* The input: open, the next image (its header parsed, checked and offered
 * to the caller, a load path picked, its raster loaded or attached), the
 * whitespace between images, release and close.  What a path does is in
 * its own file, behind the table below (input_path.h). */
#include "input.h"
#include "input_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "sys.h"

/* The paths a regular file's image may take, by what was asked for: a new
 * path is a file of its own and an entry here. */
static const struct sp_input_path *const paths[] = {
    [SP_IO_READ] = &sp_input_read,
    [SP_IO_MMAP] = &sp_input_mmap,
    [SP_IO_PREAD] = &sp_input_pread,
    /* AUTO preads a regular file: the README has the measurements */
    [SP_IO_AUTO] = &sp_input_pread,
};

const char *sp_io_name(enum sp_io io)
{
    static const char *const names[] = {"read", "mmap", "pread", "auto",
                                        "memory"};

    return io >= SP_IO_READ && io <= SP_IO_MEMORY ? names[io] : "read";
}

/* decode_plain: the plain raster of HDR, its text read by RD from its
 * first byte, into a fresh malloc'd buffer that the read path holds;
 * *END gets the offset just past its last sample. */
static sp_status decode_plain(struct sp_input *in, struct sp_reader *rd,
                              const struct sp_header *hdr, off_t *end,
                              char *why)
{
    unsigned char *buf = malloc(hdr->raster_bytes);
    struct sp_plain_text t = {.pull = sp_reader_pull, .arg = rd};
    sp_status st;

    if (buf == NULL)
        return ENOMEM;
    rd->pos = hdr->raster_offset;
    st = sp_header_decode_plain(&t, hdr, buf, why);
    free(t.buf);
    if (st != SP_OK)
        free(buf);
    else {
        *end = hdr->raster_offset + (off_t)t.used;
        sp_input_hold(in, hdr, buf, hdr->raster_bytes, buf);
        in->path = &sp_input_read;
    }
    return st;
}

/* parse_file: the header at IN->pos of IN's regular file, parsed from a
 * source that ends at the size taken at open, checked against that size
 * and accepted; a plain raster is decoded too, *END set past it.  An
 * image that is not PNM has its codec (decode.h) in *CODEC, told from the
 * block the parser read: a compressed input costs no read more. */
static sp_status parse_file(struct sp_input *in, const struct sp_accept *acc,
                            struct sp_header *hdr, off_t *end,
                            const struct sp_codec **codec, char *why)
{
    struct sp_reader rd;
    sp_status st;
    FILE *f;

    sp_reader_init(&rd);
    rd.fd = in->fd;
    rd.file = 1;
    rd.mem = in->mem;
    rd.pos = in->pos;
    rd.end = in->stamp.size;

    f = sp_reader_open(&rd);
    if (f == NULL)
        return errno;
    st = sp_header_parse(f, hdr, why);
    if (st == SP_E_NOTPNM) {
        size_t held = rd.kept && rd.block_at == in->pos ? rd.block_len : 0;

        *codec = sp_decode_sniff(rd.block, held);
        if (*codec == NULL || (*codec)->ops == NULL) {
            *codec = NULL;
            sp_decode_unknown(rd.block, held, why);
        }
    }
    if (st == SP_OK)
        st = sp_input_check_length(hdr, (size_t)in->stamp.size, why);
    if (st == SP_OK)
        st = sp_input_ask(acc, hdr, why);
    fclose(f);
    if (st == SP_OK && hdr->plain)
        st = decode_plain(in, &rd, hdr, end, why);
    if (rd.error != 0 && st != SP_OK)
        st = rd.error;
    return st;
}

/* next_file: the image at IN->pos of IN's regular file, by PATH (the read
 * path when PATH cannot: the kernel will not map the file); IN->pos then
 * goes past it. */
static sp_status next_file(struct sp_input *in,
                           const struct sp_input_path *path,
                           const struct sp_accept *acc,
                           struct sp_load_info *info)
{
    size_t size = (size_t)in->stamp.size;
    struct sp_header hdr;
    unsigned char next[2];
    off_t end = 0;
    const struct sp_codec *codec = NULL;
    sp_status st;

    info->input_bytes = size;
    st = parse_file(in, acc, &hdr, &end, &codec, info->why);
    if (codec != NULL) {
        info->why[0] = '\0';
        return sp_input_decoded(in, path, codec, acc, info);
    }
    info->codec = st == SP_E_NOTPNM ? NULL : SP_CODEC_PNM;
    if (st == SP_OK && !hdr.plain) {
        end = hdr.raster_offset + (off_t)hdr.raster_bytes;
        st = path->load(in, &hdr);
        if (st != SP_OK && path != &sp_input_read) {
            path = &sp_input_read;
            st = path->load(in, &hdr);
        }
        if (st == SP_OK)
            in->path = path;
    }
    info->io_used = st == SP_OK ? in->path->io : SP_IO_READ;
    /* Whether another image follows: read before the stamp is checked, so
     * that a file cut after the image is caught, not taken for its end. */
    info->trailing_bytes = st == SP_OK ? size - (size_t)end : 0;
    info->trailing_image =
        info->trailing_bytes >= 2 &&
        sp_input_read_at(in, next, 2, end) == 2 && sp_input_is_magic(next, 2);
    /* The bytes read (or mapped, before any is touched) must be those of
     * the file whose size was taken; a load that failed on a file that
     * changed says so, not what its new bytes look like. */
    st = sp_input_restamp(in, st, info);
    if (st != SP_OK)
        return st;
    info->magic = hdr.magic;
    info->raster_offset = hdr.raster_offset;
    info->next = end;
    in->pos = end;
    return SP_OK;
}

/* next_given: IN's given image (an image source's), its header made
 * from its type and asked about (ACC: it cannot be shrunk on load), its
 * rows read in place and its metadata copied: the memory path's. */
static sp_status next_given(struct sp_input *in, const struct sp_accept *acc,
                            struct sp_load_info *info)
{
    const struct sp_image *g = in->given;
    struct sp_header hdr = {
        .magic = g->magic, .width = g->width, .height = g->height,
        .channels = g->channels, .sample_size = g->sample_size,
        .maxval = g->maxval, .packed = g->packed, .alpha = g->alpha};
    sp_status st;

    memcpy(hdr.tuple_type, g->tuple_type, sizeof hdr.tuple_type);
    hdr.raster_bytes = g->stride * g->height;
    st = sp_input_ask(acc, &hdr, info->why);
    if (st == SP_OK && in->given_meta != NULL)
        st = sp_meta_copy(&in->meta, in->given_meta);
    if (st != SP_OK)
        return st;
    sp_input_hold(in, &hdr, NULL, 0, g->pixels);
    in->img.stride = g->stride;
    in->path = &sp_input_memory;
    info->io_used = SP_IO_MEMORY;
    info->magic = g->magic;
    info->input_bytes = hdr.raster_bytes;
    return SP_OK;
}

struct sp_src sp_src_path(const char *path)
{
    return (struct sp_src){.kind = SP_SRC_PATH, .path = path, .fd = -1};
}

struct sp_src sp_src_fd(int fd)
{
    struct sp_src s = {.kind = SP_SRC_FD, .fd = fd};

    snprintf(s.label, sizeof s.label, "fd %d", fd);
    return s;
}

struct sp_src sp_src_memory(const void *data, size_t len)
{
    return (struct sp_src){.kind = SP_SRC_MEMORY, .fd = -1, .data = data,
                           .len = len};
}

struct sp_src sp_src_image(const struct sp_image *image,
                           const struct sp_meta *meta)
{
    return (struct sp_src){.kind = SP_SRC_IMAGE, .fd = -1, .image = image,
                           .meta = meta};
}

const char *sp_src_name(const struct sp_src *s)
{
    if (s->name != NULL)
        return s->name;
    switch (s->kind) {
    case SP_SRC_PATH:
        return s->path != NULL ? s->path : "-";
    case SP_SRC_FD:
        return s->label[0] != '\0' ? s->label : "descriptor";
    case SP_SRC_MEMORY:
        return "memory";
    case SP_SRC_IMAGE:
        break;
    }
    return "image";
}

/* open_memory: IN reading the LEN bytes at DATA in place: a regular file
 * of that size that never changes. */
static sp_status open_memory(struct sp_input *in, const unsigned char *data,
                             size_t len)
{
    if (data == NULL || len == 0 || len > (size_t)INT64_MAX)
        return EINVAL;
    in->fd = -1;
    in->file = 1;
    in->mem = data;
    in->stamp.size = (off_t)len;
    return SP_OK;
}

sp_status sp_input_open(struct sp_input *in, const struct sp_src *src,
                        int nowait, struct sp_reuse *reuse)
{
    int shared = src->kind == SP_SRC_FD ||
                 (src->kind == SP_SRC_PATH && strcmp(src->path, "-") == 0);
    struct stat sb;
    sp_status st = SP_OK;
    int fl;

    memset(in, 0, sizeof *in);
    in->reuse = reuse;
    if (src->kind == SP_SRC_MEMORY)
        return open_memory(in, src->data, src->len);
    if (src->kind == SP_SRC_IMAGE) {
        in->fd = -1;
        in->given = src->image;
        in->given_meta = src->meta;
        return src->image != NULL && src->image->pixels != NULL &&
                       src->image->width > 0 && src->image->height > 0
                   ? SP_OK
                   : EINVAL;
    }
    if (src->kind == SP_SRC_FD && src->fd < 0)
        return EINVAL;
    in->fd = src->kind == SP_SRC_FD ? src->fd
             : shared ? STDIN_FILENO
                      : sp_sys.open(src->path, O_RDONLY | O_CLOEXEC |
                                                   (nowait ? O_NONBLOCK : 0));
    if (in->fd < 0)
        return errno;
    in->own = !shared;
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
        /* Not 0 when a shared descriptor is a file read in part. */
        in->pos = shared ? sp_sys.lseek(in->fd, 0, SEEK_CUR) : 0;
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

sp_status sp_input_restamp(struct sp_input *in, sp_status st,
                           struct sp_load_info *info)
{
    sp_status now = sp_input_stamp_check(in);

    if (st == SP_OK && now != SP_OK) {
        sp_input_release(in);
        return now;
    }
    if (st != SP_OK && now == SP_E_CHANGED) {
        info->why[0] = '\0';
        return now;
    }
    return st;
}

sp_status sp_input_next(struct sp_input *in, enum sp_io io,
                        sp_accept_fn *accept, void *arg,
                        struct sp_load_info *info)
{
    struct sp_accept acc = {accept, arg};
    sp_status st;

    (void)sp_input_release(in);
    memset(info, 0, sizeof *info);
    info->io_used = io;
    if (in->given != NULL)
        st = in->images == 0 ? next_given(in, &acc, info) : SP_E_EMPTY;
    else if (in->mem != NULL)
        st = next_file(in, &sp_input_memory, &acc, info);
    else if (in->file)
        st = next_file(in, paths[io >= SP_IO_READ && io <= SP_IO_AUTO
                                     ? io
                                     : SP_IO_READ],
                       &acc, info);
    else if ((st = sp_input_stream.next(in, &acc, info)) == SP_OK)
        in->path = &sp_input_stream;
    if (st == SP_OK) {
        in->images++;
        in->codec = info->codec;
    }
    return st;
}

int sp_input_ends_here(const struct sp_input *in, unsigned char next)
{
    return in->codec != NULL && in->codec->ops != NULL &&
           !sp_decode_starts(next);
}

sp_status sp_input_release(struct sp_input *in)
{
    sp_status st = SP_OK;

    if (in->path != NULL)
        st = in->path->release(in);
    in->path = NULL;
    sp_meta_free(&in->meta);
    memset(&in->held, 0, sizeof in->held);
    memset(&in->img, 0, sizeof in->img);
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
        ssize_t n = sp_input_read_at(in, buf, want, in->pos);
        size_t sp;

        if (n < 0)
            return errno;
        if (n == 0)
            return SP_E_CHANGED;  /* shorter than when it was opened */
        sp = sp_input_space(buf, (size_t)n);
        if (sp < (size_t)n && sp_input_ends_here(in, buf[sp])) {
            in->skipped += (size_t)(size - in->pos);
            in->pos = size;
            break;
        }
        in->pos += (off_t)sp;
        in->skipped += sp;
        if (sp < (size_t)n) {
            *more = 1;
            return SP_OK;
        }
    }
    /* The end of the file as opened, if what was read after the image
     * says so: only if they are still that file's bytes. */
    return in->skipped > 0 ? sp_input_stamp_check(in) : SP_OK;
}

sp_status sp_input_more(struct sp_input *in, int *more)
{
    *more = 0;
    in->skipped = 0;
    if (in->given != NULL)  /* one image */
        return SP_OK;
    return in->file ? file_more(in, more) : sp_input_stream.more(in, more);
}

void sp_input_close(struct sp_input *in)
{
    (void)sp_input_release(in);
    free(in->rest.buf);
    in->rest = (struct sp_inbuf){NULL, 0, 0, 0};
    if (in->own)
        sp_sys.close(in->fd);
    else if (in->file && in->mem == NULL)  /* a shared descriptor: just
                                              past what was read */
        (void)sp_sys.lseek(in->fd, in->pos, SEEK_SET);
    in->fd = -1;
    in->own = 0;
}

/* close_owned: the release of an image that sp_load_checked() left with
 * its input: the input's image released, the input closed and freed. */
static sp_status close_owned(void *owner)
{
    struct sp_input *in = owner;
    sp_status st = sp_input_release(in);

    sp_input_close(in);
    free(in);
    return st;
}

sp_status sp_load_checked(const char *path, enum sp_io io,
                          sp_accept_fn *accept, void *arg,
                          struct sp_image *img, struct sp_load_info *info)
{
    struct sp_input *in = malloc(sizeof *in);
    struct sp_src src;
    sp_status st;

    memset(img, 0, sizeof *img);
    memset(info, 0, sizeof *info);
    info->io_used = io;
    if (in == NULL)
        return ENOMEM;
    src = sp_src_path(path);
    st = sp_input_open(in, &src, 0, NULL);
    if (st != SP_OK) {
        free(in);
        return st;
    }
    st = sp_input_next(in, io, accept, arg, info);
    if (st == SP_OK && in->path->rows == sp_input_in_place &&
        in->path->release == sp_input_free) {
        /* a buffer in memory: the image's own */
        *img = in->img;
        img->backing = SP_BACKING_MALLOC;
        img->base = in->held.p;
        img->base_len = in->held.len;
        in->path = NULL;
    } else if (st == SP_OK) {
        *img = in->img;
        img->backing = SP_BACKING_OWNED;
        img->base = in->held.p;
        img->base_len = in->held.len;
        img->release = close_owned;
        img->owner = in;
        return SP_OK;
    }
    sp_input_close(in);
    free(in);
    return st;
}

sp_status sp_load(const char *path, enum sp_io io, struct sp_image *img,
                  struct sp_load_info *info)
{
    return sp_load_checked(path, io, NULL, NULL, img, info);
}
