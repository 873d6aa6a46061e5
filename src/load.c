/* The loader: open, take the size and stamp, parse and check the header,
 * ask the caller, pick the backend; and the stream path. */
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

/* raster_end: the least input length (from the start of the file or the
 * stream) that can hold the raster HDR promises, saturating: a plain
 * raster needs at least one digit and one separator per sample (but the
 * last), so a header cannot make us allocate far more than the input
 * holds. */
static size_t raster_end(const struct sp_header *hdr)
{
    size_t need = hdr->raster_bytes, end;

    if (hdr->plain) {
        size_t samples = hdr->raster_bytes / hdr->bytes;
        need = samples > (SIZE_MAX - 1) / 2 ? SIZE_MAX : 2 * samples - 1;
    }
    if (__builtin_add_overflow((size_t)hdr->raster_offset, need, &end))
        return SIZE_MAX;
    return end;
}

/* check_length: is an input of INPUT_BYTES long enough for the raster HDR
 * promises? */
static sp_status check_length(const struct sp_header *hdr, size_t input_bytes,
                              char *why)
{
    size_t off = (size_t)hdr->raster_offset;
    size_t have = input_bytes > off ? input_bytes - off : 0;

    if (input_bytes >= raster_end(hdr))
        return SP_OK;
    snprintf(why, SP_WHY_MAX,
             "%zux%zu %s image needs %s%zu bytes of pixel data, file has %zu",
             hdr->width, hdr->height, hdr->channels == 3 ? "color" : "gray",
             hdr->plain ? "at least " : "", raster_end(hdr) - off, have);
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
    if (st != SP_OK)
        free(buf);
    else
        sp_image_adopt(img, SP_BACKING_MALLOC, buf, hdr->raster_bytes, hdr,
                       buf);
    return st;
}

/* What sp_load_checked asks about a header, and of whom. */
struct accept {
    sp_accept_fn *fn;
    void *arg;
};

static sp_status ask(const struct accept *acc, const struct sp_header *hdr,
                     char *why)
{
    return acc->fn != NULL ? acc->fn(hdr, acc->arg, why) : SP_OK;
}

/* parse_file: the header of the file open on FD, parsed from a source
 * that ends at the size in STAMP, checked against that size and accepted;
 * a plain raster is decoded into IMG too, *END set past it. */
static sp_status parse_file(int fd, const struct sp_stamp *stamp,
                            const struct accept *acc, struct sp_header *hdr,
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
        st = check_length(hdr, (size_t)stamp->size, why);
    if (st == SP_OK)
        st = ask(acc, hdr, why);
    if (st == SP_OK && hdr->plain)
        st = decode_plain(f, hdr, img, end, why);
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
                           enum sp_io io, const struct accept *acc,
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
    info->trailing_bytes = size - (size_t)end;
    info->trailing_image =
        info->trailing_bytes >= 2 &&
        sp_sys.pread(fd, next, 2, end) == 2 && is_magic(next, 2);
    return SP_OK;
}

/* Input buffered from a stream: LEN bytes of CAP; EOF once read() said so. */
struct inbuf {
    unsigned char *buf;
    size_t len, cap;
    int eof;
};

/* fill_some: one read() from FD into S, the buffer grown by doubling up to
 * LIMIT bytes, so that memory follows the data that arrives and never
 * passes what a header claims. */
static sp_status fill_some(int fd, struct inbuf *s, size_t limit)
{
    ssize_t n;

    if (s->len == s->cap) {
        size_t cap = s->cap == 0              ? (size_t)1 << 16
                     : s->cap > SIZE_MAX / 2 ? SIZE_MAX
                                             : s->cap * 2;
        unsigned char *p;

        if (cap > limit)
            cap = limit;
        p = realloc(s->buf, cap);
        if (p == NULL)
            return ENOMEM;
        s->buf = p;
        s->cap = cap;
    }
    do
        n = sp_sys.read(fd, s->buf + s->len, s->cap - s->len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno;
    s->len += (size_t)n;
    s->eof = n == 0;
    return SP_OK;
}

/* fill: read from FD until S holds WANT bytes or the stream ends. */
static sp_status fill(int fd, struct inbuf *s, size_t want)
{
    sp_status st = SP_OK;

    while (st == SP_OK && s->len < want && !s->eof)
        st = fill_some(fd, s, want);
    return st;
}

/* parse_buffered: parse the header at the start of S's bytes. */
static sp_status parse_buffered(struct inbuf *s, struct sp_header *hdr,
                                char *why)
{
    FILE *f = fmemopen(s->buf, s->len, "rb");
    sp_status st;

    if (f == NULL)
        return errno;
    st = sp_header_parse(f, hdr, why);
    fclose(f);
    return st;
}

/* The most header (with its comments) a stream may send before its
 * raster; past this a header that does not parse is an error. */
#define STREAM_HEADER_MAX (1u << 20)

/* stream_header: read from FD into S until a header parses into HDR. */
static sp_status stream_header(int fd, struct inbuf *s,
                               struct sp_header *hdr, char *why)
{
    sp_status st;

    /* Parse after every read: a header cut off by what has arrived so far
     * may parse with more, so a bad one is final only at the end of the
     * stream or past STREAM_HEADER_MAX bytes. */
    for (;;) {
        st = fill_some(fd, s, STREAM_HEADER_MAX);
        if (st == SP_OK && s->len == 0 && s->eof)
            st = SP_E_EMPTY;
        if (st == SP_OK && s->len > 0)
            st = parse_buffered(s, hdr, why);
        else if (st == SP_OK)
            st = SP_E_BADHEADER;
        if (st == SP_E_NOTPNM && s->len < 2 && !s->eof)
            continue;  /* one byte of the magic number so far */
        if (st != SP_E_BADHEADER && st != SP_E_EMPTY)
            return st;
        if (s->eof || s->len >= STREAM_HEADER_MAX)
            return st;
    }
}

/* A plain raster decoded as it arrives: row by row into BUF, grown by
 * doubling up to MAX (the decoded raster's size). */
struct rows {
    unsigned char *buf;
    size_t cap, stride, max;
};

static unsigned char *grow_row(void *arg, size_t y)
{
    struct rows *r = arg;
    size_t need = (y + 1) * r->stride;

    if (need > r->cap) {
        size_t cap = r->cap > r->max / 2 ? r->max : 2 * r->cap;
        unsigned char *p = realloc(r->buf, cap < need ? need : cap);

        if (p == NULL)
            return NULL;
        r->buf = p;
        r->cap = cap < need ? need : cap;
    }
    return r->buf + y * r->stride;
}

/* stream_short: after a plain raster from a stream failed to decode, is
 * the stream too short for it, as check_length would say of a file?  Reads
 * on (into S's buffer, whose bytes are spent) only until that is known. */
static sp_status stream_short(int fd, struct inbuf *s, size_t total,
                              const struct sp_header *hdr, int eof,
                              char *why)
{
    size_t want = raster_end(hdr);

    while (total < want && !eof) {
        ssize_t n = sp_sys.read(fd, s->buf, s->cap);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        total += (size_t)n;
        eof = n == 0;
    }
    return check_length(hdr, total, why);
}

/* stream_plain: decode HDR's plain raster from what S holds and then FD,
 * stopping after its last sample. */
static sp_status stream_plain(int fd, struct inbuf *s,
                              const struct sp_header *hdr,
                              struct sp_image *img, struct sp_load_info *info)
{
    struct sp_reader rd = {.fd = fd, .head = s->buf, .head_len = s->len,
                            .eof = s->eof};
    struct rows r = {NULL, 0, hdr->raster_bytes / hdr->height,
                     hdr->raster_bytes};
    off_t end = 0;
    int c0 = EOF, c1 = EOF;
    sp_status st;
    FILE *f = sp_reader_open(&rd);

    if (f == NULL)
        return errno;
    st = sp_header_decode_plain_rows(f, hdr, grow_row, &r, &end, info->why);
    rd.stop = 1;  /* what follows the image stays unread */
    if (st == SP_OK) {
        c0 = getc(f);
        c1 = getc(f);
    }
    fclose(f);
    if (rd.error != 0) {
        st = rd.error;
    } else if (st == SP_E_BADRASTER || st == SP_E_BADHEADER) {
        sp_status cut = stream_short(fd, s, s->len + rd.taken, hdr,
                                     rd.eof, info->why);
        if (cut != SP_OK)
            st = cut;
    }
    if (st != SP_OK) {
        free(r.buf);
        return st;
    }
    sp_image_adopt(img, SP_BACKING_MALLOC, r.buf, r.cap, hdr, r.buf);
    info->input_bytes = s->len + rd.taken;
    info->trailing_bytes = info->input_bytes - (size_t)end;
    info->trailing_image = c0 == 'P' && c1 >= '1' && c1 <= '7';
    return SP_OK;
}

/* stream_binary: HDR's binary raster: S filled to its end. */
static sp_status stream_binary(int fd, struct inbuf *s,
                               const struct sp_header *hdr,
                               struct sp_image *img, struct sp_load_info *info)
{
    size_t end = raster_end(hdr);
    sp_status st = fill(fd, s, end);

    if (st == SP_OK)
        st = check_length(hdr, s->len, info->why);
    if (st != SP_OK)
        return st;
    info->input_bytes = s->len;
    info->trailing_bytes = s->len - end;  /* what was read: the rest waits */
    info->trailing_image = is_magic(s->buf + end, s->len - end);
    sp_image_adopt(img, SP_BACKING_MALLOC, s->buf, s->cap, hdr,
                   s->buf + hdr->raster_offset);
    s->buf = NULL;  /* IMG's now */
    return SP_OK;
}

/* load_stream: anything that is not a regular file with a size: a pipe,
 * FIFO, terminal, device.  Reads the header first, and after ACC accepts
 * it, exactly the raster it announces (plain: up to its last sample). */
static sp_status load_stream(int fd, const struct accept *acc,
                             struct sp_image *img, struct sp_load_info *info)
{
    struct inbuf s = {NULL, 0, 0, 0};
    struct sp_header hdr;
    sp_status st = stream_header(fd, &s, &hdr, info->why);

    if (st == SP_OK)
        st = ask(acc, &hdr, info->why);
    if (st == SP_OK && hdr.plain)
        st = stream_plain(fd, &s, &hdr, img, info);
    else if (st == SP_OK)
        st = stream_binary(fd, &s, &hdr, img, info);
    free(s.buf);
    if (st != SP_OK)
        return st;
    info->magic = hdr.magic;
    info->raster_offset = hdr.raster_offset;
    info->io_used = SP_IO_READ;
    return SP_OK;
}

sp_status sp_load_checked(const char *path, enum sp_io io,
                          sp_accept_fn *accept, void *arg,
                          struct sp_image *img, struct sp_load_info *info)
{
    struct accept acc = {accept, arg};
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
        st = load_file(fd, &stamp, io, &acc, img, info);
        /* Leave a shared stdin just past the image, as netpbm does. */
        if (st == SP_OK && is_stdin)
            (void)sp_sys.lseek(fd, (off_t)(info->input_bytes -
                                           info->trailing_bytes), SEEK_SET);
    } else {
        st = load_stream(fd, &acc, img, info);
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
