/* A PNG's rows deflated in segments, side by side on the threads that
 * scale them, pigz's way.  A segment is an item's rows (plan.h: fixed by
 * row index and row size, never by the thread count), filtered as
 * write_png.c's heuristic chooses and deflated raw (zlib's level and
 * memory level, Z_FILTERED for filtered rows, as libpng sets them) with
 * the last 32 KiB of filtered bytes before it as the dictionary, ended
 * with a sync flush (the last with the stream's end): the segments one
 * after another in row order are one deflate stream.  The rows before a
 * segment come from the caller, scaled again (sp_output_lookback says how
 * many), so a segment's bytes depend on the image alone.  The writer adds
 * the zlib header, the Adler-32 of all the filtered bytes (combined from
 * the segments'), and the PNG's chunks around them: the metadata
 * (meta.h) after IHDR, as write_png.c writes it: an iCCP chunk named
 * "icc" (the profile deflated as libpng deflates it, at zlib's default
 * level) and an eXIf chunk holding the orientation alone. */
#include "write.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "convert.h"
#include "encode.h"

/* WINDOW: deflate's window, the most a dictionary can be. */
#define WINDOW ((size_t)32768)

/* A thread's encoder: deflate's state and the rows it filters. */
struct sp_deflater {
    z_stream z;
    int ready;              /* Z is initialized */
    size_t row_bytes;       /* a PNG row's, less its filter byte */
    unsigned char *conv;    /* a row converted to the output's type */
    unsigned char *png[2];  /* rows in the PNG's form, taken in turn */
    unsigned char *filt;    /* a row filtered: its type byte, then the
                               bytes */
    unsigned char *dict;    /* the filtered rows before the segment */
};

/* A segment encoded, waiting to be written. */
struct sp_segment {
    unsigned char *out;     /* the deflated bytes, LEN of CAP */
    size_t len, cap;
    uLong adler;            /* the Adler-32 of the filtered bytes */
    size_t raw;             /* the filtered bytes */
    size_t y0, rows;        /* the output rows it holds */
    int last;               /* it ends the image */
};

/* Each PNG row's form: a sample's bytes (1 or 2) and the pixel's. */
static unsigned sample_bytes(const struct sp_image *t)
{
    return t->maxval > 255 ? 2 : 1;
}

static size_t png_row_bytes(const struct sp_output *o)
{
    return o->type.width * o->type.channels * sample_bytes(&o->type);
}

static int level_of(const struct sp_output *o)
{
    return o->compression >= 0 ? o->compression : SP_PNG_LEVEL;
}

/* dict_rows: the filtered rows whose bytes hold the last WINDOW before a
 * segment. */
static size_t dict_rows(const struct sp_output *o)
{
    size_t n = png_row_bytes(o) + 1;

    return (WINDOW + n - 1) / n;
}

int sp_output_segmented(const struct sp_output *o, size_t *lookback)
{
    if (o->fmt != SP_OUT_PNG)
        return 0;
    *lookback = dict_rows(o) + 1;
    return 1;
}

/* grow: room for N more deflated bytes in S.  Returns 0 or ENOMEM. */
static sp_status grow(struct sp_segment *s, size_t n)
{
    size_t cap = s->cap ? s->cap : 65536;
    unsigned char *p;

    while (cap - s->len < n)
        cap *= 2;
    if (cap == s->cap)
        return SP_OK;
    if ((p = realloc(s->out, cap)) == NULL)
        return ENOMEM;
    s->out = p;
    s->cap = cap;
    return SP_OK;
}

/* prepare: S's buffers and deflate for O (made once, reused). */
static sp_status prepare(struct sp_deflater *s, const struct sp_output *o)
{
    int level = level_of(o);
    size_t rb = png_row_bytes(o);

    if (s->ready)
        return deflateReset(&s->z) == Z_OK ? SP_OK : ENOMEM;
    s->row_bytes = rb;
    s->conv = malloc(sp_image_row_bytes(&o->type, o->type.width));
    s->png[0] = malloc(rb);
    s->png[1] = malloc(rb);
    s->filt = malloc(rb + 1);
    s->dict = malloc(dict_rows(o) * (rb + 1));
    if (s->conv == NULL || s->png[0] == NULL || s->png[1] == NULL ||
        s->filt == NULL || s->dict == NULL)
        return ENOMEM;
    if (deflateInit2(&s->z, level, Z_DEFLATED, -15, 8,
                     level != 0 ? Z_FILTERED : Z_DEFAULT_STRATEGY) != Z_OK)
        return ENOMEM;
    s->ready = 1;
    return SP_OK;
}

/* png_row: row Y of IMG in the PNG's form: IMG's own bytes where they
 * are, else converted and rescaled into BUF. */
static const unsigned char *png_row(const struct sp_output *o,
                                    struct sp_deflater *s,
                                    const struct sp_image *img, size_t y,
                                    unsigned char *buf)
{
    const unsigned char *row = img->pixels + y * img->stride;
    struct sp_image t = o->type;
    unsigned bytes = sample_bytes(&t);

    int rescale = t.maxval != (bytes == 2 ? 65535u : 255u);

    if (sp_convert_needed(img, &t)) {
        sp_convert_row(img, &t, img->width, row, rescale ? s->conv : buf,
                       o->background);
        row = rescale ? s->conv : buf;
    }
    if (!rescale)
        return row;
    sp_samples_rescale(buf, row, img->width, t.channels, t.channels,
                       t.sample_size, t.maxval, bytes, o->background);
    return buf;
}

/* deflate_all: N bytes at P through D's stream with FLUSH into S, its
 * output grown as it needs.  Returns 0 or ENOMEM. */
static sp_status deflate_all(struct sp_deflater *d, struct sp_segment *s,
                             const unsigned char *p, size_t n, int flush)
{
    d->z.next_in = (unsigned char *)p;
    d->z.avail_in = (uInt)n;
    for (;;) {
        int r;

        if (grow(s, n / 2 + 4096) != SP_OK)
            return ENOMEM;
        d->z.next_out = s->out + s->len;
        d->z.avail_out = (uInt)(s->cap - s->len);
        r = deflate(&d->z, flush);
        s->len = s->cap - d->z.avail_out;
        if (r == Z_STREAM_END ||
            ((r == Z_OK || r == Z_BUF_ERROR) && flush != Z_FINISH &&
             d->z.avail_in == 0 && d->z.avail_out != 0))
            return SP_OK;
        if (r != Z_OK && r != Z_BUF_ERROR)
            return ENOMEM;
    }
}

/* put: the filtered row in D->filt into S and its Adler-32. */
static sp_status put(struct sp_deflater *d, struct sp_segment *s)
{
    size_t n = d->row_bytes + 1;

    s->adler = adler32(s->adler, d->filt, (uInt)n);
    s->raw += n;
    return deflate_all(d, s, d->filt, n, Z_NO_FLUSH);
}

/* dictionary: the rows of BEFORE (those just above the segment, the
 * first only as the one above the next unless it is the image's first)
 * filtered, their last WINDOW bytes set as S's dictionary.  Returns the
 * last row of BEFORE in the PNG's form (in S->png[*SIDE]), or zeros. */
static const unsigned char *dictionary(const struct sp_output *o,
                                       struct sp_deflater *s,
                                       const struct sp_image *before,
                                       size_t y0, unsigned allowed,
                                       unsigned bpp, int *side)
{
    const unsigned char *up = NULL;
    size_t n = s->row_bytes + 1, len = 0, h = before->height;

    memset(s->png[1], 0, s->row_bytes);
    *side = 0;
    if (h == y0)
        up = s->png[1];
    for (size_t y = 0; y < h; y++) {
        const unsigned char *row = png_row(o, s, before, y, s->png[*side]);

        if (up != NULL) {
            sp_png_filter(s->dict + len, row, up, s->row_bytes, bpp,
                          allowed);
            len += n;
        }
        up = row;
        *side ^= 1;
    }
    if (len > 0)
        deflateSetDictionary(&s->z,
                             s->dict + (len > WINDOW ? len - WINDOW : 0),
                             (uInt)(len > WINDOW ? WINDOW : len));
    return up;
}

sp_status sp_segment_encode(const struct sp_output *o,
                            struct sp_deflater **def,
                            struct sp_segment **seg,
                            const struct sp_image *rows, unsigned times,
                            size_t y0, const struct sp_image *before)
{
    struct sp_deflater *d = *def;
    struct sp_segment *s = *seg;
    unsigned bpp = o->type.channels * sample_bytes(&o->type);
    unsigned allowed = sp_png_allowed(&o->type, level_of(o));
    const unsigned char *up;
    sp_status st;
    int side;

    if (d == NULL && (d = *def = calloc(1, sizeof *d)) == NULL)
        return ENOMEM;
    if (s == NULL && (s = *seg = calloc(1, sizeof *s)) == NULL)
        return ENOMEM;
    if ((st = prepare(d, o)) != SP_OK)
        return st;
    s->len = s->raw = 0;
    s->adler = adler32(0, NULL, 0);
    s->y0 = y0;
    s->rows = rows->height * times;
    s->last = y0 + s->rows == o->type.height;
    up = dictionary(o, d, before, y0, allowed, bpp, &side);
    for (size_t y = 0; st == SP_OK && y < rows->height; y++) {
        const unsigned char *row = png_row(o, d, rows, y, d->png[side]);

        sp_png_filter(d->filt, row, up, d->row_bytes, bpp, allowed);
        st = put(d, s);
        /* A repeat is filtered under itself: the same bytes each time. */
        if (times > 1)
            sp_png_filter(d->filt, row, row, d->row_bytes, bpp, allowed);
        for (unsigned t = 1; st == SP_OK && t < times; t++)
            st = put(d, s);
        up = row;
        side ^= 1;
    }
    if (st == SP_OK)
        st = deflate_all(d, s, NULL, 0, s->last ? Z_FINISH : Z_SYNC_FLUSH);
    return st;
}

void sp_segment_free(struct sp_segment *s)
{
    if (s != NULL)
        free(s->out);
    free(s);
}

void sp_deflater_free(struct sp_deflater *d)
{
    if (d == NULL)
        return;
    if (d->ready)
        deflateEnd(&d->z);
    free(d->conv);
    free(d->png[0]);
    free(d->png[1]);
    free(d->filt);
    free(d->dict);
    free(d);
}

/* be32: V as 4 big-endian bytes at P. */
static void be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* chunk: a PNG chunk of TYPE whose data is the N parts PARTS, to F.
 * Returns 0 or the write's errno value. */
static sp_status chunk(FILE *f, const char *type, const struct iovec *parts,
                       int n)
{
    unsigned char head[8], tail[4];
    size_t len = 0;
    uLong crc = crc32(0, (const unsigned char *)type, 4);

    for (int i = 0; i < n; i++) {
        len += parts[i].iov_len;
        crc = crc32(crc, parts[i].iov_base, (uInt)parts[i].iov_len);
    }
    be32(head, (uint32_t)len);
    memcpy(head + 4, type, 4);
    be32(tail, (uint32_t)crc);
    errno = 0;
    if (fwrite(head, 1, 8, f) != 8)
        return errno ? errno : EIO;
    for (int i = 0; i < n; i++)
        if (parts[i].iov_len != 0 &&
            fwrite(parts[i].iov_base, 1, parts[i].iov_len, f) !=
                parts[i].iov_len)
            return errno ? errno : EIO;
    if (fwrite(tail, 1, 4, f) != 4)
        return errno ? errno : EIO;
    return SP_OK;
}

/* meta_chunks: O's metadata as an iCCP and an eXIf chunk, to O's file.
 * Returns 0, ENOMEM or the write's errno value. */
static sp_status meta_chunks(struct sp_output *o)
{
    static const unsigned char name[5] = "icc";  /* NUL, then method 0 */
    unsigned char *z = NULL, *exif = NULL;
    uLongf zlen = compressBound((uLong)o->meta.icc_len);
    size_t len;
    sp_status st = SP_OK;

    if (o->meta.icc != NULL) {
        struct iovec parts[2] = {{(void *)name, sizeof name}, {NULL, 0}};

        if ((z = malloc(zlen)) == NULL ||
            compress2(z, &zlen, o->meta.icc, (uLong)o->meta.icc_len,
                      Z_DEFAULT_COMPRESSION) != Z_OK)
            st = ENOMEM;
        parts[1] = (struct iovec){z, zlen};
        if (st == SP_OK)
            st = chunk(o->to.f, "iCCP", parts, 2);
    }
    if (st == SP_OK)
        st = sp_meta_exif_block(&o->meta, &exif, &len);
    if (st == SP_OK && exif != NULL) {
        struct iovec part = {exif + SP_META_EXIF_HEAD,
                             len - SP_META_EXIF_HEAD};

        st = chunk(o->to.f, "eXIf", &part, 1);
    }
    free(z);
    free(exif);
    return st;
}

/* start: O's signature and IHDR (its size, bit depth and color type; no
 * interlace), then its metadata. */
static sp_status start(struct sp_output *o)
{
    static const unsigned char sig[8] = {137, 'P', 'N', 'G', 13, 10, 26, 10};
    static const unsigned char types[4] = {0, 4, 2, 6};
    unsigned char ihdr[13] = {0};
    struct iovec part = {ihdr, sizeof ihdr};
    sp_status st;

    be32(ihdr, (uint32_t)o->type.width);
    be32(ihdr + 4, (uint32_t)o->type.height);
    ihdr[8] = (unsigned char)(8 * sample_bytes(&o->type));
    ihdr[9] = types[o->type.channels - 1];
    errno = 0;
    if (fwrite(sig, 1, sizeof sig, o->to.f) != sizeof sig)
        return errno ? errno : EIO;
    st = chunk(o->to.f, "IHDR", &part, 1);
    return st == SP_OK ? meta_chunks(o) : st;
}

/* zlib_header: the stream's two bytes: deflate with a 32 KiB window, and
 * LEVEL's FLEVEL bits as zlib sets them. */
static void zlib_header(unsigned char h[2], int level)
{
    unsigned flevel = level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3;

    h[0] = 0x78;
    h[1] = (unsigned char)(flevel << 6);
    h[1] = (unsigned char)(h[1] + 31 - (h[0] * 256u + h[1]) % 31);
}

sp_status sp_output_put_segment(struct sp_output *o,
                                const struct sp_segment *s, char *why)
{
    unsigned char head[2], adler[4];
    struct iovec parts[3] = {{head, 0}, {s->out, s->len}, {adler, 0}};
    sp_status st = SP_OK;

    if (o->broken || s->y0 != o->rows) {
        snprintf(why, SP_WHY_MAX, "PNG: rows from %zu, %zu written", s->y0,
                 o->rows);
        return SP_E_ENCODE;
    }
    if (o->rows == 0) {
        st = start(o);
        zlib_header(head, level_of(o));
        parts[0].iov_len = 2;
        o->adler = adler32(0, NULL, 0);
    }
    o->adler = adler32_combine(o->adler, s->adler, (z_off_t)s->raw);
    if (s->last) {
        be32(adler, (uint32_t)o->adler);
        parts[2].iov_len = 4;
    }
    if (st == SP_OK)
        st = chunk(o->to.f, "IDAT", parts, 3);
    if (st == SP_OK && s->last)
        st = chunk(o->to.f, "IEND", NULL, 0);
    o->rows += s->rows;
    o->broken = st != SP_OK;
    return st;
}
