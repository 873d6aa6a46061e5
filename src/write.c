#include "write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <unistd.h>

#include <stb_image_write.h>

#include "sys.h"

sp_status sp_outfmt_for(const char *path, enum sp_outfmt *fmt)
{
    static const struct { const char *ext; enum sp_outfmt fmt; } known[] = {
        {"ppm", SP_OUT_PNM}, {"pgm", SP_OUT_PNM}, {"pnm", SP_OUT_PNM},
        {"png", SP_OUT_PNG}, {"jpg", SP_OUT_JPEG}, {"jpeg", SP_OUT_JPEG},
        {"bmp", SP_OUT_BMP}, {"tga", SP_OUT_TGA},
    };
    const char *base = strrchr(path, '/');
    const char *dot;

    base = base != NULL ? base + 1 : path;
    dot = strrchr(base, '.');
    *fmt = SP_OUT_PNM;
    if (dot == NULL || dot == base)  /* no extension, or a dot file */
        return SP_OK;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcasecmp(dot + 1, known[i].ext) == 0) {
            *fmt = known[i].fmt;
            return SP_OK;
        }
    }
    return SP_E_OUTFORMAT;
}

/* The limits of the stb formats.  stb_image_write (1.16) takes the sizes
 * as int and computes in int: every expression below must stay within
 * INT_MAX, and a field of the format must hold its value.
 *   all       the width and height themselves (int parameters).
 *   PNG       a row's filter is picked by summing |byte| (up to 128) over
 *             the row in an int: w*c <= INT_MAX / 128.  The filtered rows,
 *             (w*c+1)*h bytes, are deflated into a buffer whose int
 *             capacity grows from 2 to 2m+1, so it holds at most
 *             3*2^29-2 bytes (the next growth overflows); with fixed
 *             Huffman codes a byte takes at most 9 bits, and 2 header
 *             bytes, 10 bits of block header and end code, the padding
 *             and the 4-byte Adler-32 come on top: 6 + ceil((9n+10)/8)
 *             bytes for n filtered bytes.  The int expressions
 *             (x*n+1)*y, data_len+32766 and the chunk sizes stay below.
 *   JPEG, TGA 16-bit width and height fields; the offset of the last
 *             pixel, (w*h-1)*c, in an int (JPEG's base_p + col*comp, TGA's
 *             j*x*comp, and (j*x+i)*comp of the uncompressed TGA and BMP).
 *   BMP       the file size, 54 + (3w padded to 4)*h, in an int (RGBA:
 *             122 + 4wh), and the pixel offset as above. */
#define STB_SIDE_MAX INT_MAX
#define PNG_ROW_MAX (INT_MAX / 128)
#define PNG_ZBUF_MAX (3 * ((uint64_t)1 << 29) - 2)
#define PNG_FILTERED_MAX (((PNG_ZBUF_MAX - 6) * 8 - 10) / 9)
#define SIDE16_MAX 65535

typedef unsigned __int128 u128;

static const char *const outfmt_names[] = {
    [SP_OUT_PNM] = "PNM", [SP_OUT_PNG] = "PNG", [SP_OUT_JPEG] = "JPEG",
    [SP_OUT_BMP] = "BMP", [SP_OUT_TGA] = "TGA",
};

/* refuse: SP_E_TOOBIG, WHY saying that W x H is too large for FMT and,
 * in brackets, the limit LIMIT formats. */
__attribute__((format(printf, 5, 6)))
static sp_status refuse(char *why, enum sp_outfmt fmt, size_t w, size_t h,
                        const char *limit, ...)
{
    va_list ap;
    size_t n;

    /* Two sizes of at most 20 digits and a name: the start always fits. */
    n = (size_t)snprintf(why, SP_WHY_MAX, "%zux%zu is too large for %s (",
                         w, h, outfmt_names[fmt]);
    va_start(ap, limit);
    n += (size_t)vsnprintf(why + n, SP_WHY_MAX - n, limit, ap);
    va_end(ap);
    if (n + 1 < SP_WHY_MAX) {
        why[n] = ')';
        why[n + 1] = '\0';
    }
    return SP_E_TOOBIG;
}

static sp_status png_fits(size_t w, size_t h, unsigned c, char *why)
{
    u128 row = (u128)w * c, filtered = (row + 1) * h;

    if (row > PNG_ROW_MAX)
        return refuse(why, SP_OUT_PNG, w, h, "stb_image_write takes up to "
                      "%d bytes a row; this is %llu", PNG_ROW_MAX,
                      (unsigned long long)row);
    if (filtered > PNG_FILTERED_MAX)
        return refuse(why, SP_OUT_PNG, w, h, "stb_image_write's limit is "
                      "%llu bytes of filtered rows; this is %llu",
                      (unsigned long long)PNG_FILTERED_MAX,
                      (unsigned long long)filtered);
    return SP_OK;
}

/* pixels_fit: the offset of the last of W x H pixels of C bytes, in an
 * int (JPEG, TGA, BMP). */
static sp_status pixels_fit(enum sp_outfmt fmt, size_t w, size_t h,
                            unsigned c, char *why)
{
    if (((u128)w * h - 1) * c > INT_MAX)
        return refuse(why, fmt, w, h, "stb_image_write's limit is %lld "
                      "pixels of %u channel%s", (long long)INT_MAX / c + 1,
                      c, c == 1 ? "" : "s");
    return SP_OK;
}

static sp_status bmp_fits(size_t w, size_t h, unsigned c, char *why)
{
    u128 row = ((u128)w * 3 + 3) & ~(u128)3;
    u128 size = c == 4 ? 122 + (u128)w * h * 4 : 54 + row * h;

    if (size > INT_MAX)
        return refuse(why, SP_OUT_BMP, w, h, "its file would be %llu bytes; "
                      "stb_image_write's limit is %d",
                      (unsigned long long)size, INT_MAX);
    return pixels_fit(SP_OUT_BMP, w, h, c, why);
}

sp_status sp_outfmt_fits(enum sp_outfmt fmt, size_t width, size_t height,
                         unsigned channels, char *why)
{
    const char *name = outfmt_names[fmt];

    why[0] = '\0';
    if (fmt == SP_OUT_PNM)
        return SP_OK;
    if (channels < 1 || channels > 4) {
        snprintf(why, SP_WHY_MAX, "%s takes 1 to 4 channels, not %u", name,
                 channels);
        return SP_E_UNSUPPORTED;
    }
    if (width == 0 || height == 0) {
        snprintf(why, SP_WHY_MAX, "an empty image (%zux%zu) cannot be "
                 "written as %s", width, height, name);
        return SP_E_ENCODE;
    }
    /* Bounded here, every product below stays under 2^64. */
    if (width > STB_SIDE_MAX || height > STB_SIDE_MAX)
        return refuse(why, fmt, width, height, "stb_image_write takes up "
                      "to %d pixels a side", STB_SIDE_MAX);
    switch (fmt) {
    case SP_OUT_PNG:
        return png_fits(width, height, channels, why);
    case SP_OUT_BMP:
        return bmp_fits(width, height, channels, why);
    case SP_OUT_JPEG:
    case SP_OUT_TGA:
        if (width > SIDE16_MAX || height > SIDE16_MAX)
            return refuse(why, fmt, width, height, "%d pixels a side",
                          SIDE16_MAX);
        return pixels_fit(fmt, width, height, channels, why);
    case SP_OUT_PNM:
        break;
    }
    return SP_OK;
}

/* The stb writers report through a callback and do not check their own
 * output: the sink remembers the first failed write. */
struct sink {
    FILE *f;
    int err;
};

static void sink_write(void *ctx, void *data, int size)
{
    struct sink *s = ctx;

    if (s->err == 0 && size > 0 &&
        fwrite(data, 1, (size_t)size, s->f) != (size_t)size)
        s->err = errno ? errno : EIO;
}

/* to_8bit: IMG's samples rescaled to 0..255 in a new malloc'd buffer. */
static unsigned char *to_8bit(const struct sp_image *img)
{
    size_t n = img->width * img->height * img->channels;
    unsigned char *out = malloc(n ? n : 1);
    const unsigned char *s = img->pixels;
    unsigned m = img->maxval;

    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned v = img->bytes == 2 ? (unsigned)s[0] << 8 | s[1] : s[0];
        unsigned long w = ((unsigned long)v * 255 + m / 2) / m;
        out[i] = (unsigned char)(w > 255 ? 255 : w);
        s += img->bytes;
    }
    return out;
}

static sp_status write_stb(const struct sp_image *img, FILE *f,
                           enum sp_outfmt fmt, char *why)
{
    struct sink sink = {f, 0};
    const unsigned char *px = img->pixels;
    unsigned char *conv = NULL;
    int w, h, c = (int)img->channels, ok = 0;
    sp_status st = sp_outfmt_fits(fmt, img->width, img->height,
                                  img->channels, why);

    if (st != SP_OK)
        return st;
    w = (int)img->width;
    h = (int)img->height;
    if (img->bytes != 1 || img->maxval != 255) {
        conv = to_8bit(img);
        if (conv == NULL)
            return ENOMEM;
        px = conv;
    }
    switch (fmt) {
    case SP_OUT_PNG:
        ok = stbi_write_png_to_func(sink_write, &sink, w, h, c, px, w * c);
        break;
    case SP_OUT_JPEG:
        ok = stbi_write_jpg_to_func(sink_write, &sink, w, h, c, px, 90);
        break;
    case SP_OUT_BMP:
        ok = stbi_write_bmp_to_func(sink_write, &sink, w, h, c, px);
        break;
    case SP_OUT_TGA:
        ok = stbi_write_tga_to_func(sink_write, &sink, w, h, c, px);
        break;
    case SP_OUT_PNM:
        break;
    }
    free(conv);
    if (sink.err != 0)
        return sink.err;
    if (!ok) {
        snprintf(why, SP_WHY_MAX, "stb_image_write failed");
        return SP_E_ENCODE;
    }
    return SP_OK;
}

/* put_rows: IMG's rows, as a PNM raster, to F; a packed raster goes out
 * in one call, so large rasters bypass stdio's buffer instead of costing a
 * write() per few rows. */
static sp_status put_rows(const struct sp_image *img, FILE *f)
{
    size_t row = img->width * sp_image_pixel_size(img);
    size_t rows = img->stride == row ? 1 : img->height;
    size_t len = img->stride == row ? row * img->height : row;

    errno = 0;
    for (size_t y = 0; y < rows; y++)
        if (fwrite(img->pixels + y * img->stride, 1, len, f) != len)
            return errno ? errno : EIO;
    return SP_OK;
}

/* writev_all: the N buffers of IOV to FD, whatever the calls take at a
 * time; IOV is used up. */
static sp_status writev_all(int fd, struct iovec *iov, size_t n)
{
    while (n > 0) {
        ssize_t w = sp_sys.writev(fd, iov, (int)n);
        size_t done;

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return EIO;
        for (done = (size_t)w; n > 0 && done >= iov->iov_len; iov++, n--)
            done -= iov->iov_len;
        if (n > 0) {
            iov->iov_base = (unsigned char *)iov->iov_base + done;
            iov->iov_len -= done;
        }
    }
    return SP_OK;
}

/* PUT_BATCH: the rows a writev() call takes (Linux allows 1024). */
#define PUT_BATCH 256

/* put_repeated: IMG's rows to F, each TIMES times, with writev() on F's
 * descriptor (after what stdio holds): the copies are the kernel's, made
 * as it writes, not the caller's. */
static sp_status put_repeated(const struct sp_image *img, unsigned times,
                              FILE *f)
{
    size_t row = img->width * sp_image_pixel_size(img), n = 0;
    struct iovec iov[PUT_BATCH];
    sp_status st;

    errno = 0;
    if (fflush(f) != 0)
        return errno ? errno : EIO;
    for (size_t y = 0; y < img->height; y++) {
        for (unsigned t = 0; t < times; t++) {
            iov[n].iov_base = img->pixels + y * img->stride;
            iov[n].iov_len = row;
            if (++n == PUT_BATCH) {
                st = writev_all(fileno(f), iov, n);
                if (st != SP_OK)
                    return st;
                n = 0;
            }
        }
    }
    return writev_all(fileno(f), iov, n);
}

sp_status sp_output_open(struct sp_output *o, const char *path,
                         enum sp_outfmt fmt, const struct sp_image *layout,
                         char *why)
{
    sp_status st = SP_OK;

    why[0] = '\0';
    memset(o, 0, sizeof *o);
    o->file = (struct sp_outfile){.fd = -1, .dir = -1};
    o->fmt = fmt;
    /* Refused before the file exists, and before anything is scaled. */
    if (fmt != SP_OUT_PNM && strcmp(path, "-") != 0) {
        st = sp_outfmt_fits(fmt, layout->width, layout->height,
                            layout->channels, why);
        if (st != SP_OK)
            return st;
    }
    if (strcmp(path, "-") == 0) {
        o->fmt = SP_OUT_PNM;
        o->f = stdout;
    } else {
        st = sp_outfile_open(&o->file, path, why);
        if (st == SP_OK && (o->f = fdopen(o->file.fd, "wb")) == NULL) {
            st = errno;
            close(o->file.fd);
        }
    }
    if (st == SP_OK && o->fmt == SP_OUT_PNM) {
        errno = 0;
        st = sp_header_write(o->f, layout->width, layout->height,
                             layout->channels, layout->maxval, why);
    }
    if (st != SP_OK)
        return sp_output_close(o, st);
    return SP_OK;
}

sp_status sp_output_put(struct sp_output *o, const struct sp_image *img,
                        char *why)
{
    errno = 0;
    if (o->fmt == SP_OUT_PNM)
        return put_rows(img, o->f);
    return write_stb(img, o->f, o->fmt, why);
}

sp_status sp_output_put_repeated(struct sp_output *o,
                                 const struct sp_image *img, unsigned times)
{
    if (times == 1)
        return put_rows(img, o->f);
    return put_repeated(img, times, o->f);
}

sp_status sp_output_close(struct sp_output *o, sp_status st)
{
    if (o->f != NULL) {
        errno = 0;
        if (fflush(o->f) != 0 && st == SP_OK)
            st = errno ? errno : EIO;
        if (ferror(o->f) && st == SP_OK)
            st = EIO;
    }
    /* Standard output is the caller's to close. */
    if (o->f != stdout) {
        if (st == SP_OK && o->f != NULL)
            st = sp_outfile_commit(&o->file);
        if (o->f != NULL && fclose(o->f) != 0 && st == SP_OK)
            st = errno;
        sp_outfile_close(&o->file);
    }
    memset(o, 0, sizeof *o);
    o->file = (struct sp_outfile){.fd = -1, .dir = -1};
    return st;
}

sp_status sp_write(const struct sp_image *img, const char *path,
                   enum sp_outfmt fmt, char *why)
{
    struct sp_output o;
    sp_status st = sp_output_open(&o, path, fmt, img, why);

    if (st != SP_OK)
        return st;
    return sp_output_close(&o, sp_output_put(&o, img, why));
}
