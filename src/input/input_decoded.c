/* A compressed input (JPEG, PNG: decode.h) as one image of an input: its
 * bytes held as the load path asked (mmap: the file mapped, decoded in
 * place under the SIGBUS guard; read, pread, auto: read into one buffer),
 * its header decoded and offered to the caller before a raster byte is
 * decoded or its raster allocated, then its raster decoded into a buffer
 * that the read path holds from then on, its metadata (meta.h) in the
 * input's META; the bytes given back at once.
 * The image ends at its end marker: what follows is the input's next
 * image, or whitespace, as after a PNM image. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "decode.h"
#include "guard.h"
#include "input.h"
#include "input_path.h"
#include "sys.h"

/* A step of the decode, run under the guard when the bytes are mapped. */
struct step {
    struct sp_decoder *dec;
    struct sp_header *hdr;
    unsigned char *raster;
    size_t len;
    char *why;
};

static sp_status header_step(void *arg)
{
    struct step *s = arg;

    return sp_decode_header(s->dec, s->hdr, s->why);
}

static sp_status shrink_step(void *arg)
{
    struct step *s = arg;

    return sp_decode_shrink(s->dec, s->hdr, s->why);
}

static sp_status bound_step(void *arg)
{
    struct step *s = arg;

    return sp_decode_bound(s->dec, s->len, s->why);
}

static sp_status raster_step(void *arg)
{
    struct step *s = arg;

    return sp_decode_raster(s->dec, s->raster, s->why);
}

static sp_status run(int mapped, sp_status (*fn)(void *), struct step *s)
{
    return mapped ? sp_guard_run(fn, s) : fn(s);
}

/* upright: the raster at *RASTER, decoded as HDR says, turned as
 * HDR->orient says (header.h) into a fresh buffer that replaces it (the
 * old one given back to IN's reuse); HDR then says the size turned.
 * Returns 0 or sp_image_orient()'s status (the raster then kept as it
 * was, for the caller to free). */
static sp_status upright(struct sp_input *in, struct sp_header *hdr,
                         unsigned char **raster)
{
    struct sp_image stored = {0}, turned;
    sp_status st;

    sp_image_type_of(&stored, hdr);
    stored.pixels = *raster;
    st = sp_image_orient(&turned, &stored, hdr->orient);
    if (st != SP_OK)
        return st;
    sp_reuse_give(in->reuse, *raster, hdr->raster_bytes);
    *raster = turned.pixels;
    hdr->width = turned.width;
    hdr->height = turned.height;
    return SP_OK;
}

sp_status sp_input_decode_header(const struct sp_codec *codec,
                                 const unsigned char *p,
                                 size_t len, struct sp_header *hdr, char *why)
{
    struct sp_decoder *dec;
    sp_status st = sp_decode_begin(codec, p, len, &dec);

    if (st == SP_OK)
        st = sp_decode_header(dec, hdr, why);
    sp_decode_end(dec);
    return st;
}

sp_status sp_input_decode(struct sp_input *in, const struct sp_codec *codec,
                        const unsigned char *p, size_t len, int mapped,
                        const struct sp_accept *acc, struct sp_header *hdr,
                        size_t *used, char *why)
{
    struct step s = {NULL, hdr, NULL, len, why};
    /* a stream's header was asked about already: its shrink and
     * orientation stand */
    unsigned asked = acc->fn == NULL ? hdr->shrink : 0;
    unsigned orient = acc->fn == NULL ? hdr->orient : 0;
    sp_status st;

    st = sp_decode_begin(codec, p, len, &s.dec);
    if (st == SP_OK)
        st = run(mapped, header_step, &s);
    hdr->shrink = asked;
    hdr->orient = orient;
    if (st == SP_OK)
        st = sp_input_ask(acc, hdr, why);
    if (st == SP_OK)  /* a bomb refused before its raster is allocated */
        st = run(mapped, bound_step, &s);
    if (st == SP_OK)
        st = run(mapped, shrink_step, &s);
    if (st == SP_OK) {
        s.raster = sp_reuse_take(in->reuse, hdr->raster_bytes);
        st = s.raster == NULL ? ENOMEM : run(mapped, raster_step, &s);
    }
    *used = st == SP_OK ? sp_decode_used(s.dec) : 0;
    if (st == SP_OK)
        sp_decode_meta(s.dec, &in->meta);
    sp_decode_end(s.dec);
    if (st == SP_OK && hdr->orient > 1)
        st = upright(in, hdr, &s.raster);
    if (st == SP_OK && hdr->orient >= 1)  /* upright now: nothing to tell */
        in->meta.orientation = 0;
    if (st == SP_OK) {
        sp_input_hold(in, hdr, s.raster, hdr->raster_bytes, s.raster);
        in->path = &sp_input_read;
    } else
        free(s.raster);
    return st;
}

/* decoded: what a decode that ended with ST tells of IN's image of
 * HDR, which took USED bytes at IN->pos, into INFO; IN->pos past it. */
static sp_status decoded(struct sp_input *in, sp_status st,
                         const struct sp_header *hdr, size_t used,
                         struct sp_load_info *info)
{
    /* the bytes decoded must be those of the file opened */
    st = sp_input_restamp(in, st, info);
    if (st != SP_OK)
        return st;
    info->magic = hdr->magic;
    info->raster_offset = in->pos;  /* no raster in the file: its start */
    in->pos += (off_t)used;
    info->next = in->pos;
    info->trailing_bytes = (size_t)(in->stamp.size - in->pos);
    return SP_OK;
}

sp_status sp_input_decoded(struct sp_input *in,
                           const struct sp_input_path *path,
                           const struct sp_codec *codec,
                           const struct sp_accept *acc,
                           struct sp_load_info *info)
{
    size_t size = (size_t)in->stamp.size, len = size - (size_t)in->pos, got;
    size_t used = 0;
    /* mapped only under the SIGBUS guard (sp_init()), else read */
    int mapped = path == &sp_input_mmap && sp_guard_ready();
    unsigned char *buf = NULL;
    void *map = MAP_FAILED;
    struct sp_header hdr = {.shrink = 0};
    sp_status st = SP_OK;

    info->input_bytes = size;
    info->codec = codec;
    if (in->mem != NULL) {  /* decoded in place */
        st = sp_input_decode(in, codec, in->mem + in->pos, len, 0, acc,
                             &hdr, &used, info->why);
        info->io_used = SP_IO_MEMORY;
        return decoded(in, st, &hdr, used, info);
    }
    if (mapped) {
        map = sp_sys.mmap(NULL, size, PROT_READ, MAP_PRIVATE, in->fd, 0);
        mapped = map != MAP_FAILED;
        /* before a page is touched: a file that shrank would fault */
        if (mapped)
            st = sp_stamp_check(in->fd, &in->stamp);
    }
    if (!mapped) {
        buf = malloc(len);
        if (buf == NULL)
            st = ENOMEM;
        else if ((st = sp_sys_pread_full(in->fd, buf, len, in->pos, &got)) ==
                     SP_OK &&
                 got < len)
            st = SP_E_CHANGED;
    }
    if (st == SP_OK)
        st = sp_input_decode(in, codec,
                    mapped ? (const unsigned char *)map + in->pos : buf, len,
                    mapped, acc, &hdr, &used, info->why);
    if (mapped) {
        (void)sp_sys.madvise(map, size, MADV_DONTNEED);
        (void)sp_sys.munmap(map, size);
    }
    free(buf);
    info->io_used = mapped ? SP_IO_MMAP : SP_IO_READ;
    return decoded(in, st, &hdr, used, info);
}
