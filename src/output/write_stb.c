/* The stb encoder: BMP and TGA through stb_image_write, which enters
 * scaleppm here and nowhere else, the whole image at once; the limits of
 * its int arithmetic are checked before it is called (outfmts.c). */
#include <errno.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "encode.h"

/* stb_image_write is compiled here, static to this file, rather than
 * taken from libstb: its allocator is chosen when it is compiled, and
 * libstb's is malloc with an assert() on a failed growth of its
 * buffers (an abort; with NDEBUG, a write through NULL).  Here
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

/* An encode's arguments. */
struct put {
    struct sink *sink;
    enum sp_outfmt fmt;
    int w, h, c;
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
    if (p->fmt == SP_OUT_BMP)
        return stbi_write_bmp_to_func(sink_write, p->sink, p->w, p->h, p->c,
                                      p->px);
    if (p->fmt == SP_OUT_TGA)
        return stbi_write_tga_to_func(sink_write, p->sink, p->w, p->h, p->c,
                                      p->px);
    return 0;
}

/* to_8bit: IMG's samples rescaled to 0..255 in a new malloc'd buffer. */
static unsigned char *to_8bit(const struct sp_image *img)
{
    size_t row = img->width * img->channels, n = row * img->height;
    unsigned char *out = malloc(n > 0 ? n : 1);

    if (out == NULL)
        return NULL;
    for (size_t y = 0; y < img->height; y++)
        sp_samples_rescale(out + y * row, img->pixels + y * img->stride,
                           img->width, img->channels, img->channels,
                           img->sample_size, img->maxval, 1,
                           SP_BACKGROUND);  /* alpha kept */
    return out;
}

sp_status sp_stb_put(const struct sp_image *img, FILE *f,
                     enum sp_outfmt fmt, char *why)
{
    return sp_stb_put_failing(img, f, fmt, why, 0, NULL);
}

sp_status sp_stb_put_failing(const struct sp_image *img, FILE *f,
                             enum sp_outfmt fmt, char *why,
                             unsigned long fail_at, unsigned long *allocs)
{
    struct sink sink = {f, 0};
    struct put p = {&sink, fmt, 0, 0, (int)img->channels, img->pixels};
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
    arena = &a;
    ok = encode(&a, &p);
    arena = NULL;
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
