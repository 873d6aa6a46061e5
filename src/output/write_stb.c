/* The stb encoder: PNG, JPEG, BMP and TGA through stb_image_write, which
 * enters scaleppm here and nowhere else; and the limits of its int
 * arithmetic, checked before it is called. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "encode.h"
#include "sample.h"

/* stb_image_write is compiled here, static to this file, rather than
 * taken from libstb: its allocator is chosen when it is compiled, and
 * libstb's is malloc with an assert() on a failed growth of the PNG
 * encoder's buffers (an abort; with NDEBUG, a write through NULL).  Here
 * every allocation of the encoder goes through the arena below, which
 * never returns NULL: a failure leaves the encoder by longjmp() to
 * sp_stb_put(), which frees what the encoder held (the arena tracks its
 * blocks) and returns ENOMEM.  The encoder holds nothing else (no file, no
 * lock, no static state that a jump would leave half made), so leaving it
 * anywhere is safe.  Its own consistency checks (STBIW_ASSERT) leave the
 * same way, as SP_E_ENCODE, instead of aborting the process. */
static void *arena_realloc(void *old, size_t size);
static void arena_free(void *p);
static void arena_broken(void);
#define STBIW_MALLOC(size) arena_realloc(NULL, (size))
#define STBIW_REALLOC(p, size) arena_realloc((p), (size))
#define STBIW_FREE(p) arena_free(p)
#define STBIW_ASSERT(x) ((x) ? (void)0 : arena_broken())
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
/* Its entry points that scaleppm does not call (to a file, HDR,
 * flipping) are static and unused here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_image_write.h>
#pragma GCC diagnostic pop

/* A block of the arena: its links, then the encoder's bytes, aligned as
 * malloc's are. */
union block {
    struct {
        union block *prev, *next;
    } link;
    max_align_t align;
};

/* The arena of one encode: the blocks the encoder holds, in a ring around
 * LIVE, and where a failure goes. */
struct arena {
    jmp_buf out;
    union block live;
    sp_status failure;      /* why the encoder was left: ENOMEM, ... */
    unsigned long allocs;   /* allocations asked for so far */
    unsigned long fail_at;  /* the allocation made to fail (tests); 0:
                               none */
};

/* The encode under way on this thread.  stb's allocator macros take no
 * argument through which a context could come, so the arena reaches them
 * here; a batch encodes on several threads at once, each with its own. */
static _Thread_local struct arena *arena;

static void ring_add(struct arena *a, union block *b)
{
    b->link.prev = &a->live;
    b->link.next = a->live.link.next;
    a->live.link.next->link.prev = b;
    a->live.link.next = b;
}

static void ring_remove(union block *b)
{
    b->link.prev->link.next = b->link.next;
    b->link.next->link.prev = b->link.prev;
}

static _Noreturn void leave(struct arena *a, sp_status st)
{
    a->failure = st;
    longjmp(a->out, 1);
}

/* arena_realloc: OLD (NULL: none) grown or shrunk to SIZE bytes, or a new
 * block; never NULL: a failure leaves the encoder with ENOMEM, OLD still
 * held (and so freed). */
static void *arena_realloc(void *old, size_t size)
{
    struct arena *a = arena;
    union block *b = old != NULL ? (union block *)old - 1 : NULL, *nb = NULL;

    a->allocs++;
    if (size > SIZE_MAX - sizeof *b || a->allocs == a->fail_at)
        leave(a, ENOMEM);
    if (b != NULL)
        ring_remove(b);
    nb = realloc(b, sizeof *b + size);
    if (nb == NULL) {
        if (b != NULL)
            ring_add(a, b);
        leave(a, ENOMEM);
    }
    ring_add(a, nb);
    return nb + 1;
}

static void arena_free(void *p)
{
    union block *b = p != NULL ? (union block *)p - 1 : NULL;

    if (b != NULL) {
        ring_remove(b);
        free(b);
    }
}

static void arena_broken(void)
{
    leave(arena, SP_E_ENCODE);
}

/* arena_release: free every block the encoder still holds in A. */
static void arena_release(struct arena *a)
{
    while (a->live.link.next != &a->live) {
        union block *b = a->live.link.next;

        ring_remove(b);
        free(b);
    }
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

/* stb's PNG level is a global, read by each PNG encode: changed only
 * with no encode under way (a batch encodes several images at once).
 * png_level_hold: LEVEL set, held until png_level_drop(). */
static pthread_rwlock_t png_level = PTHREAD_RWLOCK_INITIALIZER;

static void png_level_hold(int level)
{
    pthread_rwlock_rdlock(&png_level);
    while (stbi_write_png_compression_level != level) {
        pthread_rwlock_unlock(&png_level);
        pthread_rwlock_wrlock(&png_level);
        stbi_write_png_compression_level = level;
        pthread_rwlock_unlock(&png_level);
        pthread_rwlock_rdlock(&png_level);
    }
}

static void png_level_drop(void)
{
    pthread_rwlock_unlock(&png_level);
}

/* An encode's arguments. */
struct put {
    struct sink *sink;
    enum sp_outfmt fmt;
    int w, h, c, quality;
    const unsigned char *px;
};

/* encode: P's image through stb, with A as its arena: 1 if stb says it
 * wrote it, 0 if it failed or was left (A->failure says why).  The jump
 * comes back here: A lives in the caller, so nothing the jump could leave
 * indeterminate is read after it. */
static int encode(struct arena *a, const struct put *p)
{
    if (setjmp(a->out) != 0)
        return 0;
    switch (p->fmt) {
    case SP_OUT_PNG:
        return stbi_write_png_to_func(sink_write, p->sink, p->w, p->h, p->c,
                                      p->px, p->w * p->c);
    case SP_OUT_JPEG:
        return stbi_write_jpg_to_func(sink_write, p->sink, p->w, p->h, p->c,
                                      p->px, p->quality);
    case SP_OUT_BMP:
        return stbi_write_bmp_to_func(sink_write, p->sink, p->w, p->h, p->c,
                                      p->px);
    case SP_OUT_TGA:
        return stbi_write_tga_to_func(sink_write, p->sink, p->w, p->h, p->c,
                                      p->px);
    case SP_OUT_PNM:
        break;
    }
    return 0;
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
        unsigned v = sp_sample_get(s, img->sample_size);
        unsigned long w = ((unsigned long)v * 255 + m / 2) / m;
        out[i] = (unsigned char)(w > 255 ? 255 : w);
        s += img->sample_size;
    }
    return out;
}

sp_status sp_stb_put(const struct sp_image *img, FILE *f,
                     enum sp_outfmt fmt, int quality, int compression,
                     char *why)
{
    return sp_stb_put_failing(img, f, fmt, quality, compression, why, 0,
                              NULL);
}

sp_status sp_stb_put_failing(const struct sp_image *img, FILE *f,
                             enum sp_outfmt fmt, int quality,
                             int compression, char *why,
                             unsigned long fail_at, unsigned long *allocs)
{
    struct sink sink = {f, 0};
    struct put p = {&sink, fmt, 0, 0, (int)img->channels,
                    quality > 0 ? quality : 90, img->pixels};
    struct arena a = {.fail_at = fail_at};
    unsigned char *conv = NULL;
    int ok;
    sp_status st = sp_outfmt_fits(fmt, img->width, img->height,
                                  img->channels, why);

    if (st != SP_OK)
        return st;
    p.w = (int)img->width;
    p.h = (int)img->height;
    if (img->sample_size != 1 || img->maxval != 255) {
        conv = to_8bit(img);
        if (conv == NULL)
            return ENOMEM;
        p.px = conv;
    }
    a.live.link.prev = a.live.link.next = &a.live;
    if (fmt == SP_OUT_PNG)
        png_level_hold(compression >= 0 ? compression : 8);
    arena = &a;
    ok = encode(&a, &p);
    arena = NULL;
    if (fmt == SP_OUT_PNG)
        png_level_drop();
    arena_release(&a);
    free(conv);
    if (allocs != NULL)
        *allocs = a.allocs;
    if (!ok && a.failure != SP_OK)
        st = a.failure;
    else if (sink.err != 0)
        st = sink.err;
    else if (!ok)
        st = SP_E_ENCODE;
    if (st == SP_E_ENCODE)
        snprintf(why, SP_WHY_MAX, "stb_image_write failed");
    return st;
}
