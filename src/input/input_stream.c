/* The stream path: a pipe, FIFO, terminal or device, read as far as its
 * header says and no further: the header parsed from what arrives, the
 * raster read (or a plain one decoded as it arrives) into one buffer whose
 * rows are used in place, and what was read past the image kept in the
 * input (REST) for the next image; the whitespace between images skipped
 * by reading on.  A JPEG or PNG image is read whole, within bounds
 * (stream_decoded), and decoded from memory.  Released by freeing (or
 * keeping) the buffer. */
#include "input.h"
#include "input_path.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "sys.h"

/* keep_rest: the N bytes at P (past an image read from FD) into REST, for
 * the next image; with at least two of them (unless the stream ended),
 * enough to tell whether another image follows.  Returns 0 or an errno
 * value. */
static sp_status keep_rest(int fd, struct sp_inbuf *rest,
                           const unsigned char *p, size_t n, int eof)
{
    unsigned char *b = malloc(n + 2);
    ssize_t got;

    if (b == NULL)
        return ENOMEM;
    memcpy(b, p, n);
    free(rest->buf);
    *rest = (struct sp_inbuf){b, n, n + 2, eof};
    while (rest->len < 2 && !rest->eof) {
        got = sp_sys_read_some(fd, rest->buf + rest->len,
                               rest->cap - rest->len);
        if (got < 0)
            return errno;
        rest->len += (size_t)got;
        rest->eof = got == 0;
    }
    return SP_OK;
}

/* fill_some: one read() from FD into S, the buffer grown by doubling up to
 * LIMIT bytes, so that memory follows the data that arrives and never
 * passes what a header claims. */
static sp_status fill_some(int fd, struct sp_inbuf *s, size_t limit)
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
    n = sp_sys_read_some(fd, s->buf + s->len, s->cap - s->len);
    if (n < 0)
        return errno;
    s->len += (size_t)n;
    s->eof = n == 0;
    return SP_OK;
}

/* fill: read from FD until S holds WANT bytes or the stream ends. */
static sp_status fill(int fd, struct sp_inbuf *s, size_t want)
{
    sp_status st = SP_OK;

    while (st == SP_OK && s->len < want && !s->eof)
        st = fill_some(fd, s, want);
    return st;
}

/* parse_buffered: parse the header at the start of S's bytes. */
static sp_status parse_buffered(struct sp_inbuf *s, struct sp_header *hdr,
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

/* stream_header: read from FD into S until a header parses into HDR. */
static sp_status stream_header(int fd, struct sp_inbuf *s,
                               struct sp_header *hdr, char *why)
{
    sp_status st;

    /* Parse after every read: a header cut off by what has arrived so far
     * may parse with more, so a bad one is final only at the end of the
     * stream or past SP_HEADER_MAX bytes. */
    for (int first = 1;; first = 0) {
        /* what the last image left is parsed before anything is read */
        st = first && (s->len > 0 || s->eof) ? SP_OK
                                 : fill_some(fd, s, SP_HEADER_MAX);
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
        if (s->eof)
            return st;
        if (s->len >= SP_HEADER_MAX) {
            /* cut off by the limit, not bad in itself: libnetpbm met the
             * end of what it was given */
            if (st == SP_E_BADHEADER && strstr(why, "EOF") != NULL)
                snprintf(why, SP_WHY_MAX, "no end to it in the first %u "
                         "bytes: a header from a stream (its comments "
                         "too) is read that far at most; a PNM file's by "
                         "its path has no such limit", SP_HEADER_MAX);
            return st;
        }
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
static sp_status stream_short(int fd, struct sp_inbuf *s, size_t total,
                              const struct sp_header *hdr, int eof,
                              char *why)
{
    size_t want = sp_input_raster_end(hdr);

    while (total < want && !eof) {
        ssize_t n = sp_sys_read_some(fd, s->buf, s->cap);

        if (n < 0)
            return errno;
        total += (size_t)n;
        eof = n == 0;
    }
    return sp_input_check_length(hdr, total, why);
}

/* stream_plain: decode HDR's plain raster from what S holds (its header
 * and the text that came with it) and then FD, each read made outside
 * libnetpbm's lock (header.h); what was read past its last sample is
 * kept. */
static sp_status stream_plain(struct sp_input *in, struct sp_inbuf *s,
                              const struct sp_header *hdr,
                              struct sp_load_info *info)
{
    int fd = in->fd;
    size_t off = (size_t)hdr->raster_offset;
    struct sp_reader rd = {.fd = fd, .head = s->buf + off,
                           .head_len = s->len - off, .eof = s->eof};
    struct sp_plain_text t = {.pull = sp_reader_pull, .arg = &rd};
    struct rows r = {NULL, 0, hdr->raster_bytes / hdr->height,
                     hdr->raster_bytes};
    off_t end = 0;
    sp_status st;

    st = sp_header_decode_plain_rows(&t, hdr, grow_row, &r, info->why);
    if (rd.error != 0) {
        st = rd.error;
    } else if (st == SP_E_BADRASTER) {
        sp_status cut = stream_short(fd, s, s->len + rd.taken, hdr,
                                     rd.eof, info->why);
        if (cut != SP_OK)
            st = cut;
    }
    end = hdr->raster_offset + (off_t)t.used;
    if (st == SP_OK)
        st = keep_rest(fd, &in->rest, t.buf, t.len, rd.eof);
    free(t.buf);
    if (st != SP_OK) {
        free(r.buf);
        return st;
    }
    sp_input_hold(in, hdr, r.buf, r.cap, r.buf);
    info->next = end;
    info->input_bytes = (size_t)end + in->rest.len;
    info->trailing_bytes = in->rest.len;
    info->trailing_image = sp_input_is_magic(in->rest.buf, in->rest.len);
    return SP_OK;
}

/* stream_binary: HDR's binary raster: S filled to its end. */
static sp_status stream_binary(struct sp_input *in, struct sp_inbuf *s,
                               const struct sp_header *hdr,
                               struct sp_load_info *info)
{
    int fd = in->fd;
    struct sp_inbuf *rest = &in->rest;
    size_t end = sp_input_raster_end(hdr);
    sp_status st = fill(fd, s, end);

    if (st == SP_OK)
        st = sp_input_check_length(hdr, s->len, info->why);
    if (st == SP_OK)  /* the next image's start, if any, for the next load */
        st = keep_rest(fd, rest, s->buf + end, s->len - end, s->eof);
    if (st != SP_OK)
        return st;
    info->next = (off_t)end;
    info->input_bytes = end + rest->len;
    info->trailing_bytes = rest->len;  /* what was read: the rest waits */
    info->trailing_image = sp_input_is_magic(rest->buf, rest->len);
    sp_input_hold(in, hdr, s->buf, s->cap,
                  s->buf + hdr->raster_offset);
    s->buf = NULL;  /* the image's now */
    return SP_OK;
}

/* stream_sniff: the codec of a stream's next image: bytes read into S
 * until there are enough to tell (or the stream ends). */
static sp_status stream_sniff(int fd, struct sp_inbuf *s,
                              const struct sp_codec **codec)
{
    sp_status st = SP_OK;

    while (st == SP_OK && s->len < SP_DECODE_MAGIC_LEN && !s->eof)
        st = fill_some(fd, s, SP_HEADER_MAX);
    *codec = st == SP_OK ? sp_decode_sniff(s->buf, s->len) : NULL;
    return st;
}

/* The most bytes a compressed image's header (JPEG's markers before its
 * first scan, PNG's chunks before its first IDAT: metadata, ICC profiles)
 * may take from a stream, and the most its data may take past what its
 * raster would take twice over: stored PNG rows and JPEG at its best
 * quality take less. */
#define STREAM_CODED_META ((size_t)16 << 20)

/* coded_header: read from FD into S until CODEC's header decodes into HDR
 * (a header cut short by what has arrived is tried again once S's buffer
 * is full: a retry for each doubling) or STREAM_CODED_META is passed. */
static sp_status coded_header(int fd, struct sp_inbuf *s,
                              const struct sp_codec *codec,
                              struct sp_header *hdr, char *why)
{
    for (;;) {
        size_t want = s->cap > s->len ? s->cap : 2 * s->len;
        sp_status st = sp_input_decode_header(codec, s->buf, s->len, hdr,
                                              why);

        if (st != SP_E_TRUNCATED || s->eof)
            return st;
        if (s->len >= STREAM_CODED_META) {
            snprintf(why, SP_WHY_MAX, "no image in the first %zu MiB: "
                     "a header from a stream (its metadata too) is read "
                     "that far at most; a file by its path has no such "
                     "limit", STREAM_CODED_META >> 20);
            return sp_decode_bad(codec);
        }
        st = fill(fd, s, want < STREAM_CODED_META ? want : STREAM_CODED_META);
        if (st != SP_OK)
            return st;
    }
}

/* stream_decoded: a compressed image (decode.h): its header decoded from
 * what arrives, asked about, then the stream read to its end or to the
 * bound (twice the raster and STREAM_CODED_META), the image decoded from
 * memory and what followed its end kept for the next image.  A stream's
 * compressed bytes are held whole, as a file's are (mapped or read). */
static sp_status stream_decoded(struct sp_input *in, struct sp_inbuf *s,
                                const struct sp_codec *codec,
                                const struct sp_accept *acc,
                                struct sp_header *hdr,
                                struct sp_load_info *info)
{
    const struct sp_accept asked = {NULL, NULL};  /* asked already */
    size_t used = 0, bound;
    sp_status st = coded_header(in->fd, s, codec, hdr, info->why);

    if (st == SP_OK)
        st = sp_input_ask(acc, hdr, info->why);
    if (st != SP_OK)
        return st;
    bound = hdr->raster_bytes > (SIZE_MAX - STREAM_CODED_META) / 2
                ? SIZE_MAX
                : 2 * hdr->raster_bytes + STREAM_CODED_META;
    st = fill(in->fd, s, bound);
    if (st == SP_OK)
        st = sp_input_decode(in, codec, s->buf, s->len, 0, &asked, hdr,
                             &used, info->why);
    if (st == SP_E_TRUNCATED && !s->eof) {
        snprintf(info->why, SP_WHY_MAX, "%s: more than %zu bytes for %zu x "
                 "%zu pixels: an image from a stream is read to twice its "
                 "raster's size and %zu MiB more at most; a file by its "
                 "path has no such limit", codec->name, bound,
                 hdr->width, hdr->height, STREAM_CODED_META >> 20);
        st = SP_E_TOOBIG;
    }
    if (st == SP_OK)  /* the next image's start, if any, for the next load */
        st = keep_rest(in->fd, &in->rest, s->buf + used, s->len - used,
                       s->eof);
    info->input_bytes = s->len;
    info->next = (off_t)used;
    info->trailing_bytes = s->len - used;
    return st;
}

/* next: the image that starts with what the last one left (REST), then
 * what the stream brings. */
static sp_status next(struct sp_input *in, const struct sp_accept *acc,
                      struct sp_load_info *info)
{
    /* what the last image left is this one's start */
    struct sp_inbuf s = in->rest;
    struct sp_header hdr;
    const struct sp_codec *codec = NULL;
    sp_status st;

    in->rest = (struct sp_inbuf){NULL, 0, 0, 0};
    st = stream_sniff(in->fd, &s, &codec);
    info->codec = codec;
    if (st == SP_OK && codec != NULL && codec->ops != NULL)
        st = stream_decoded(in, &s, codec, acc, &hdr, info);
    else if (st == SP_OK) {
        st = stream_header(in->fd, &s, &hdr, info->why);
        info->codec = st == SP_E_NOTPNM ? NULL : SP_CODEC_PNM;
        if (st == SP_E_NOTPNM)
            sp_decode_unknown(s.buf, s.len, info->why);
        if (st == SP_OK)
            st = sp_input_ask(acc, &hdr, info->why);
        if (st == SP_OK && hdr.plain)
            st = stream_plain(in, &s, &hdr, info);
        else if (st == SP_OK)
            st = stream_binary(in, &s, &hdr, info);
    }
    free(s.buf);
    if (st == SP_E_EMPTY && in->images == 0 && in->nowait)
        snprintf(info->why, SP_WHY_MAX,
                 "a FIFO with no writer (not waited for)");
    if (st != SP_OK)
        return st;
    info->magic = hdr.magic;
    info->raster_offset = hdr.raster_offset;
    info->io_used = SP_IO_READ;
    in->pos += info->next;
    return SP_OK;
}

/* The buffer the whitespace between images is read into, once what the
 * last image left is used up. */
#define SKIP_BLOCK ((size_t)1 << 16)

/* more: skip the whitespace at the start of REST, reading on while REST
 * runs out, until something else comes (*MORE = 1, REST starting with it)
 * or the stream ends (*MORE = 0). */
static sp_status more(struct sp_input *in, int *more)
{
    struct sp_inbuf *rest = &in->rest;
    size_t *skipped = &in->skipped;
    sp_status st = SP_OK;

    *more = 0;
    while (st == SP_OK) {
        size_t n = sp_input_space(rest->buf, rest->len);

        if (n < rest->len && sp_input_ends_here(in, rest->buf[n])) {
            *skipped += rest->len;  /* what follows is not read */
            rest->len = 0;
            break;
        }
        *skipped += n;
        if (n < rest->len) {
            memmove(rest->buf, rest->buf + n, rest->len - n);
            rest->len -= n;
            *more = 1;
            break;
        }
        rest->len = 0;
        if (rest->eof)
            break;
        if (rest->cap < SKIP_BLOCK) {  /* kept to the size of what it held */
            free(rest->buf);
            rest->buf = NULL;
            rest->cap = 0;
        }
        st = fill_some(in->fd, rest, SKIP_BLOCK);
    }
    in->pos += (off_t)in->skipped;
    return st;
}

const struct sp_input_path sp_input_stream = {
    .io = SP_IO_READ,
    .next = next,
    .more = more,
    SP_INPUT_IN_MEMORY,
};
