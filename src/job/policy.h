/* policy.h: what a job accepts, asked of an input's header before any of
 * its raster is read, mapped or buffered (input.h's sp_accept_fn), and
 * how the image is then scaled (its geometry, job_types.h): the size of
 * the output, and the shrink a decoder that can shrink (a JPEG) decodes
 * at. */
#ifndef SP_POLICY_H
#define SP_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "header.h"
#include "job_types.h"
#include "status.h"

struct sp_policy {
    const struct sp_job *job;  /* its factor, filter, fit and no_shrink */
    uint64_t max_pixels;       /* of the input, and of the output */
    struct sp_geom *geom;      /* where the image's geometry goes */
};

/* sp_policy_accept: an sp_accept_fn with ARG a struct sp_policy: the
 * image's geometry into *GEOM and the shrink it decodes at into
 * hdr->shrink.  A factor's output is ceil(W/N) x ceil(H/N) for a reduce
 * by N; with the box filter a JPEG is decoded at 1/d, d the largest of 8,
 * 4 and 2 that divides N, then box-reduced by N/d (the same size).  A
 * fit's output is its box's size (struct sp_fit); a JPEG is decoded at
 * the largest 1/d whose size stays at or above it, then resampled.  The
 * output size must be computable, and neither the input nor the output
 * may have more than max_pixels pixels.  Returns 0, SP_E_TOOBIG or
 * SP_E_LIMIT, with a detail in WHY. */
sp_status sp_policy_accept(struct sp_header *hdr, void *arg, char *why);

/* sp_fit_size: the output size of a W x H image fitted to FIT (its
 * width or height, or both, non-zero), into *OW x *OH. */
void sp_fit_size(const struct sp_fit *fit, size_t w, size_t h, size_t *ow,
                 size_t *oh);

#endif
