#include "policy.h"

#include <stdio.h>

#include "resample.h"
#include "scale.h"

/* over_limit: a W x H image has more pixels than LIMIT allows; WHY
 * (SP_WHY_MAX bytes) says so. */
static int over_limit(char *why, const char *what, size_t w, size_t h,
                      uint64_t limit)
{
    unsigned __int128 px = (unsigned __int128)w * h;

    if (px <= limit)
        return 0;
    snprintf(why, SP_WHY_MAX, "%s is %zux%zu, over the limit of "
             "%llu pixels (raise it with --max-pixels)", what, w, h,
             (unsigned long long)limit);
    return 1;
}

/* side: the side of an image A x B given A' on the other, A' B / A
 * rounded to nearest (a half up), and at least 1: vipsthumbnail's. */
static size_t side(size_t a, size_t b, size_t a_out)
{
    unsigned __int128 v = ((unsigned __int128)2 * b * a_out + a) /
                          ((unsigned __int128)2 * a);

    return v < 1 ? 1 : (size_t)v;
}

void sp_fit_size(const struct sp_fit *fit, size_t w, size_t h, size_t *ow,
                 size_t *oh)
{
    /* the width bounds when the box is no wider, for the height, than
     * the image: w / fit->width >= h / fit->height */
    if (fit->height == 0 ||
        (fit->width != 0 && (unsigned __int128)w * fit->height >=
                                (unsigned __int128)h * fit->width)) {
        *ow = fit->width;
        *oh = side(w, h, fit->width);
    } else {
        *oh = fit->height;
        *ow = side(h, w, fit->height);
    }
}

/* decoded: a side of N pixels decoded at 1/D. */
static size_t decoded(size_t n, unsigned d)
{
    return n / d + (n % d != 0);
}

/* shrink_for: the largest of 8, 4 and 2 (up to MOST) that a W x H image
 * can be decoded at with each side at least OW x OH and, with N not 0,
 * that divides N; 1 when none can. */
static unsigned shrink_for(unsigned most, size_t w, size_t h, size_t ow,
                           size_t oh, size_t n)
{
    for (unsigned d = 8; d >= 2; d /= 2)
        if (d <= most && decoded(w, d) >= ow && decoded(h, d) >= oh &&
            (n == 0 || n % d == 0))
            return d;
    return 1;
}

/* upright_size: the size of HDR's image as it is loaded, *W x *H: turned
 * upright when the accept sets HDR->orient (5 to 8 swap the sides). */
static void upright_size(const struct sp_header *hdr, size_t *w, size_t *h)
{
    int swap = hdr->orient >= 5 && hdr->orient <= 8;

    *w = swap ? hdr->height : hdr->width;
    *h = swap ? hdr->width : hdr->height;
}

/* too_large: a resample to W x H is past what the kernel sums (WHY says
 * so, WHAT the size's name). */
static int too_large(char *why, const char *what, size_t w, size_t h)
{
    if (w <= SP_RESAMPLE_MAX && h <= SP_RESAMPLE_MAX)
        return 0;
    snprintf(why, SP_WHY_MAX, "%s it would be %zux%zu, too large to "
             "resample", what, w, h);
    return 1;
}

/* decode_for: HDR's shrink-on-load (a JPEG's) and G's decoded size, for
 * a resample of the W x H image to TW x TH: decoded at no less than twice
 * that, as vipsthumbnail decodes: a DCT scale leaves aliasing that only
 * an average over two or more pixels a side smooths (on real
 * photographs, 10 dB of PSNR against a fit from the full decode, at
 * worst, for a decode one step smaller). */
static void decode_for(const struct sp_policy *p, struct sp_header *hdr,
                       struct sp_geom *g, size_t w, size_t h, size_t tw,
                       size_t th)
{
    if (!p->job->no_shrink && hdr->shrink_max > 1)
        hdr->shrink = shrink_for(hdr->shrink_max, w, h, 2 * tw, 2 * th, 0);
    g->shrink = hdr->shrink > 1 ? hdr->shrink : 1;
    g->in_width = decoded(w, g->shrink);
    g->in_height = decoded(h, g->shrink);
}

/* crop: G for a crop of P's job (struct sp_fit's CROP) of an image W x H
 * upright: the box W' x H' filled, the image resampled to cover it (the
 * side that is short of the box's ratio rounded as sp_fit_size rounds
 * it), and the middle of the cover kept, what is over cut equally from
 * both ends (a pixel more from the right or bottom).  Without ENLARGE an
 * image that covering would enlarge is not resampled: the middle of it
 * is kept, no larger than the box. */
static sp_status crop(const struct sp_policy *p, struct sp_header *hdr,
                      struct sp_geom *g, size_t w, size_t h, char *why)
{
    const struct sp_fit *f = &p->job->fit;
    size_t cw, ch, ow = f->width, oh = f->height;

    if ((unsigned __int128)w * f->height >= (unsigned __int128)h * f->width) {
        ch = f->height;  /* wider than the box: the height fills it */
        cw = side(h, w, f->height);
    } else {
        cw = f->width;
        ch = side(w, h, f->width);
    }
    if (!f->enlarge && (cw > w || ch > h)) {
        cw = w;
        ch = h;
        ow = ow < w ? ow : w;
        oh = oh < h ? oh : h;
    }
    if (too_large(why, "covering the box", cw, ch))
        return SP_E_TOOBIG;
    decode_for(p, hdr, g, w, h, cw, ch);
    g->cover_width = cw;
    g->cover_height = ch;
    g->crop_x = (cw - ow) / 2;
    g->crop_y = (ch - oh) / 2;
    g->out_width = ow;
    g->out_height = oh;
    g->factor = 1;
    g->resample = 1;  /* the area filter's rows, which the crop cuts */
    return SP_OK;
}

/* fit: G for a fit of P's job: the box's size, or the image's own when
 * it lies inside the box and is not to be enlarged. */
static sp_status fit(const struct sp_policy *p, struct sp_header *hdr,
                     struct sp_geom *g, char *why)
{
    const struct sp_fit *f = &p->job->fit;
    size_t w, h, ow, oh;

    upright_size(hdr, &w, &h);
    if (w > SP_RESAMPLE_MAX || h > SP_RESAMPLE_MAX) {
        snprintf(why, SP_WHY_MAX, "%zux%zu is too large to resample", w, h);
        return SP_E_TOOBIG;
    }
    if (f->crop)
        return crop(p, hdr, g, w, h, why);
    sp_fit_size(f, w, h, &ow, &oh);
    if (!f->enlarge && ow >= w && oh >= h) {
        ow = w;
        oh = h;
    }
    if (too_large(why, "fitted", ow, oh))
        return SP_E_TOOBIG;
    decode_for(p, hdr, g, w, h, ow, oh);
    g->out_width = ow;
    g->out_height = oh;
    g->factor = 1;
    g->resample = ow != g->in_width || oh != g->in_height;
    return SP_OK;
}

/* factor: G for P's job's factor: a reduce of a JPEG by N with a filter
 * that shrinks (an average: box) decoded at 1/d, d dividing N, and
 * reduced by N/d. */
static sp_status factor(const struct sp_policy *p, struct sp_header *hdr,
                        struct sp_geom *g, char *why)
{
    const int n = p->job->factor;
    size_t w, h;
    sp_status st;

    if (n < -1 && n >= -SP_SCALE_MAX &&
        sp_filter_of(p->job->filter)->shrinks && !p->job->no_shrink &&
        hdr->shrink_max > 1)
        hdr->shrink = shrink_for(hdr->shrink_max, 1, 1, 1, 1,
                                 (size_t)-(long long)n);
    g->shrink = hdr->shrink > 1 ? hdr->shrink : 1;
    g->factor = g->shrink > 1 ? n / (int)g->shrink : n;
    g->resample = 0;
    upright_size(hdr, &w, &h);
    g->in_width = decoded(w, g->shrink);
    g->in_height = decoded(h, g->shrink);
    st = sp_scale_size(g->in_width, g->in_height, g->factor, &g->out_width,
                       &g->out_height);
    if (st == SP_E_TOOBIG)
        snprintf(why, SP_WHY_MAX, "scaled by %d it would be larger than "
                 "memory can address", n);
    return st;
}

sp_status sp_policy_accept(struct sp_header *hdr, void *arg, char *why)
{
    const struct sp_policy *p = arg;
    const struct sp_fit *f = &p->job->fit;
    sp_status st;

    hdr->shrink = 1;
    p->geom->cover_width = p->geom->cover_height = 0;
    p->geom->crop_x = p->geom->crop_y = 0;
    /* Upright, as a viewer shows it, unless the job keeps the stored
     * order (meta.h then carries the tag into the output). */
    hdr->orient = !p->job->no_orient && hdr->orientation >= 1 &&
                          hdr->orientation <= 8
                      ? hdr->orientation
                      : 0;
    st = f->width != 0 || f->height != 0 ? fit(p, hdr, p->geom, why)
                                         : factor(p, hdr, p->geom, why);
    if (st == SP_OK &&
        (over_limit(why, "the input", hdr->width, hdr->height,
                    p->max_pixels) ||
         over_limit(why, "the output", p->geom->out_width,
                    p->geom->out_height, p->max_pixels)))
        st = SP_E_LIMIT;
    return st;
}
