/* The output: the format a path asks for, and sp_output's calls, which
 * open the atomic file (outfile.c) and hand the rows to the PNM encoder
 * (write_pnm.c) or a streamed one (PNG: write_png.c; JPEG:
 * write_jpeg.c), or the whole image to the stb encoder (write_stb.c). */
#include "write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"
#include "encode.h"
#include "header.h"

/* The extensions an output's name may end in: the format and the type
 * each asks for. */
static const struct {
    const char *ext;
    enum sp_outfmt fmt;
    enum sp_want want;
} known[] = {
    {"pnm", SP_OUT_PNM, SP_WANT_KEEP}, {"pam", SP_OUT_PNM, SP_WANT_PAM},
    {"pbm", SP_OUT_PNM, SP_WANT_PBM},  {"pgm", SP_OUT_PNM, SP_WANT_PGM},
    {"ppm", SP_OUT_PNM, SP_WANT_PPM},  {"png", SP_OUT_PNG, SP_WANT_STB},
    {"jpg", SP_OUT_JPEG, SP_WANT_STB}, {"jpeg", SP_OUT_JPEG, SP_WANT_STB},
    {"bmp", SP_OUT_BMP, SP_WANT_STB},  {"tga", SP_OUT_TGA, SP_WANT_STB},
};

/* name_kind: the format and the type PATH's extension asks for,
 * case-insensitive; no extension (or a dot file's name) and "-" ask for
 * PNM of the image's own type.  Returns 0 or SP_E_OUTFORMAT. */
static sp_status name_kind(const char *path, enum sp_outfmt *fmt,
                           enum sp_want *want)
{
    const char *base = strrchr(path, '/');
    const char *dot;

    base = base != NULL ? base + 1 : path;
    dot = strrchr(base, '.');
    *fmt = SP_OUT_PNM;
    *want = SP_WANT_KEEP;
    if (dot == NULL || dot == base)  /* no extension, or a dot file */
        return SP_OK;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcasecmp(dot + 1, known[i].ext) == 0) {
            *fmt = known[i].fmt;
            *want = known[i].want;
            return SP_OK;
        }
    }
    return SP_E_OUTFORMAT;
}

sp_status sp_outfmt_for(const char *path, enum sp_outfmt *fmt,
                        enum sp_want *want)
{
    enum sp_want w;
    sp_status st = name_kind(path, fmt, &w);

    if (want != NULL)
        *want = *fmt == SP_OUT_PNM ? w : SP_WANT_KEEP;
    return st;
}

void sp_outfmt_known(char *why)
{
    size_t n = (size_t)snprintf(why, SP_WHY_MAX, "the extensions "
                                "written are");

    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        n += (size_t)snprintf(why + n, SP_WHY_MAX - n, " .%s",
                              known[i].ext);
    snprintf(why + n, SP_WHY_MAX - n, " (none: PNM)");
}

sp_status sp_output_open(struct sp_output *o, const struct sp_target *t,
                         enum sp_outfmt fmt, enum sp_want want,
                         const struct sp_image *layout, int nowait,
                         char *why)
{
    sp_status st;

    why[0] = '\0';
    memset(o, 0, sizeof *o);
    sp_target_init(&o->to);
    if ((unsigned)fmt > SP_OUT_TGA || (unsigned)want >= SP_WANT_STB) {
        sp_outfmt_known(why);
        return SP_E_OUTFORMAT;
    }
    o->fmt = fmt;
    o->want = fmt == SP_OUT_PNM ? want : SP_WANT_STB;
    o->compression = -1;
    o->stream = o->fmt == SP_OUT_PNG    ? &sp_stream_png
                : o->fmt == SP_OUT_JPEG ? &sp_stream_jpeg
                                        : NULL;
    /* Refused before the file exists, and before anything is scaled. */
    st = sp_convert_type(layout, o->want, &o->type, why);
    if (st == SP_OK && o->fmt != SP_OUT_PNM)
        st = sp_outfmt_fits(o->fmt, layout->width, layout->height,
                            o->type.channels, why);
    if (st != SP_OK)
        return st;
    st = sp_target_open(&o->to, t, nowait, why);
    o->splice = o->fmt == SP_OUT_PNM && o->to.pipe;
    if (st == SP_OK && o->fmt == SP_OUT_PNM) {
        errno = 0;
        st = sp_header_write(o->to.f, &o->type, why);
    }
    if (st != SP_OK)
        return sp_output_close(o, st);
    return SP_OK;
}

sp_status sp_output_next(struct sp_output *o, const struct sp_image *layout,
                         char *why)
{
    sp_status st;

    why[0] = '\0';
    if (o->fmt != SP_OUT_PNM) {
        snprintf(why, SP_WHY_MAX, "the input holds more than one image and "
                 "this format holds one (write PNM, or split the input with "
                 "pamsplit)");
        return SP_E_ENCODE;
    }
    st = sp_convert_type(layout, o->want, &o->type, why);
    if (st != SP_OK)
        return st;
    errno = 0;
    return sp_header_write(o->to.f, &o->type, why);
}

/* converted: IMG's rows in O's type into *VIEW: IMG itself, or its rows
 * converted into O's buffer.  Returns 0, SP_E_TOOBIG or ENOMEM. */
static sp_status converted(struct sp_output *o, const struct sp_image *img,
                           struct sp_image *view)
{
    size_t row, need;

    if (!sp_convert_needed(img, &o->type) || img->height == 0) {
        *view = *img;
        return SP_OK;
    }
    row = sp_image_row_bytes(&o->type, img->width);
    if (__builtin_mul_overflow(row, img->height, &need))
        return SP_E_TOOBIG;
    if (need > o->conv_len) {
        unsigned char *p = realloc(o->conv, need);

        if (p == NULL)
            return ENOMEM;
        o->conv = p;
        o->conv_len = need;
    }
    for (size_t y = 0; y < img->height; y++)
        sp_convert_row(img, &o->type, img->width,
                       img->pixels + y * img->stride, o->conv + y * row);
    *view = o->type;
    view->backing = SP_BACKING_NONE;
    view->pixels = o->conv;
    view->width = img->width;
    view->height = img->height;
    view->stride = row;
    return SP_OK;
}

int sp_output_is_streamed(enum sp_outfmt fmt)
{
    return fmt == SP_OUT_PNM || fmt == SP_OUT_PNG || fmt == SP_OUT_JPEG;
}

/* stream_rows: VIEW's rows (in O's type), each TIMES times, to O's
 * streamed encoder: begun with the first rows, finished with the last.
 * After a failure it takes nothing more. */
static sp_status stream_rows(struct sp_output *o, const struct sp_image *view,
                             unsigned times, char *why)
{
    struct sp_encode_opts opts = {o->quality, o->compression, o->subsample};
    size_t n;
    sp_status st = SP_OK;

    if (view->width != o->type.width ||
        __builtin_mul_overflow(view->height, (size_t)times, &n) ||
        n > o->type.height - o->rows) {
        snprintf(why, SP_WHY_MAX, "%zu rows of %zu pixels do not fit a "
                 "%zux%zu image with %zu rows written", view->height,
                 view->width, o->type.width, o->type.height, o->rows);
        return SP_E_ENCODE;
    }
    if (o->broken)
        return SP_E_ENCODE;
    errno = 0;
    if (o->enc == NULL)
        st = o->stream->begin(o->to.f, &o->type, &opts, &o->enc, why);
    if (st == SP_OK && n > 0)
        st = o->stream->rows(o->enc, view, times, why);
    if (st == SP_OK && o->rows + n == o->type.height)
        st = o->stream->finish(o->enc, why);
    o->rows += n;
    o->broken = st != SP_OK;
    return st;
}

sp_status sp_output_put(struct sp_output *o, const struct sp_image *img,
                        char *why)
{
    struct sp_image view;
    sp_status st = converted(o, img, &view);

    if (st != SP_OK)
        return st;
    errno = 0;
    if (o->stream != NULL)
        return stream_rows(o, &view, 1, why);
    if (o->fmt == SP_OUT_PNM)
        return sp_pnm_put_rows(&view, o->to.f);
    return sp_stb_put(&view, o->to.f, o->fmt, why);
}

sp_status sp_output_put_repeated(struct sp_output *o,
                                 const struct sp_image *img, unsigned times,
                                 const struct iovec *pages, char *why)
{
    struct sp_image view;
    sp_status st = converted(o, img, &view);

    if (st != SP_OK)
        return st;
    if (o->stream != NULL)
        return stream_rows(o, &view, times, why);
    if (o->splice && pages != NULL && view.pixels == img->pixels)
        return sp_pnm_put_repeated(&view, times, o->to.f, pages);
    if (times == 1)
        return sp_pnm_put_rows(&view, o->to.f);
    return sp_pnm_put_repeated(&view, times, o->to.f, NULL);
}

sp_status sp_output_close(struct sp_output *o, sp_status st)
{
    if (o->stream != NULL && o->to.f != NULL && st == SP_OK &&
        (o->broken || o->rows != o->type.height))
        st = SP_E_ENCODE;
    if (o->stream != NULL)
        o->stream->end(o->enc);
    st = sp_target_close(&o->to, st);
    free(o->conv);
    memset(o, 0, sizeof *o);
    sp_target_init(&o->to);
    return st;
}

/* pnm_whole: F (SIZE bytes) is binary PNM images, one after another, the
 * last ending at its end. */
static int pnm_whole(FILE *f, off_t size)
{
    struct sp_header hdr;
    char why[SP_WHY_MAX];
    off_t end = 0;

    while (end < size) {
        if (fseeko(f, end, SEEK_SET) != 0 ||
            sp_header_parse(f, &hdr, why) != SP_OK || hdr.plain ||
            hdr.raster_bytes > (size_t)(size - hdr.raster_offset))
            return 0;
        end = hdr.raster_offset + (off_t)hdr.raster_bytes;
    }
    return end == size && size > 0;
}

/* tga_whole: F (SIZE bytes) is a TGA whose pixels are all there: stb
 * writes one with no footer, run-length coded or not, so the packets are
 * walked until they cover width x height pixels. */
static int tga_whole(FILE *f, off_t size)
{
    unsigned char h[18];
    size_t pixels, bpp, got = 0;
    int rle;

    if (size < 18 || fread(h, 1, 18, f) != 18)
        return 0;
    rle = h[2] >= 9;
    bpp = h[16] / 8u;
    pixels = (size_t)(h[12] | h[13] << 8) * (size_t)(h[14] | h[15] << 8);
    if (bpp == 0 || fseeko(f, 18 + h[0], SEEK_SET) != 0)
        return 0;
    if (!rle)
        return size == 18 + h[0] + (off_t)(pixels * bpp);
    while (got < pixels) {
        int c = getc(f);
        size_t n = c < 0 ? 0 : (size_t)(c & 0x7f) + 1;

        if (c < 0 || fseeko(f, (off_t)((c & 0x80 ? 1 : n) * bpp),
                            SEEK_CUR) != 0)
            return 0;
        got += n;
    }
    return got == pixels && ftello(f) == size;
}

/* tail_is: the last N bytes of F (SIZE bytes) are WANT. */
static int tail_is(FILE *f, off_t size, const void *want, size_t n)
{
    unsigned char b[12];

    return size >= (off_t)n && n <= sizeof b &&
           fseeko(f, size - (off_t)n, SEEK_SET) == 0 &&
           fread(b, 1, n, f) == n && memcmp(b, want, n) == 0;
}

int sp_output_whole(const char *path, enum sp_outfmt fmt)
{
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D',
                                           0xae, 0x42, 0x60, 0x82};
    static const unsigned char eoi[2] = {0xff, 0xd9};
    unsigned char head[6];
    /* not blocked by a FIFO: only a regular file can be whole */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    struct stat sb;
    int whole = 0;

    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
        fread(head, 1, sizeof head, f) == sizeof head &&
        fseeko(f, 0, SEEK_SET) == 0) {
        switch (fmt) {
        case SP_OUT_PNM:
            whole = pnm_whole(f, sb.st_size);
            break;
        case SP_OUT_PNG:
            whole = memcmp(head, "\x89PNG\r\n", 6) == 0 &&
                    tail_is(f, sb.st_size, iend, sizeof iend);
            break;
        case SP_OUT_JPEG:
            whole = head[0] == 0xff && head[1] == 0xd8 &&
                    tail_is(f, sb.st_size, eoi, sizeof eoi);
            break;
        case SP_OUT_BMP:
            whole = head[0] == 'B' && head[1] == 'M' &&
                    (off_t)((uint32_t)head[2] | (uint32_t)head[3] << 8 |
                            (uint32_t)head[4] << 16 |
                            (uint32_t)head[5] << 24) == sb.st_size;
            break;
        case SP_OUT_TGA:
            whole = tga_whole(f, sb.st_size);
            break;
        }
    }
    fclose(f);
    return whole;
}
