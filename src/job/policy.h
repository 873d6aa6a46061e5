/* policy.h: what a job accepts, asked of an input's header before any of
 * its raster is read, mapped or buffered (input.h's sp_accept_fn). */
#ifndef SP_POLICY_H
#define SP_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "header.h"
#include "status.h"

struct sp_policy {
    int factor;             /* the scale (scale.h) */
    uint64_t max_pixels;    /* of the input, and of the output */
    size_t *out_width;      /* where the output's size goes */
    size_t *out_height;
};

/* sp_policy_accept: an sp_accept_fn with ARG a struct sp_policy: the
 * output size must be computable (it is stored), and neither the input
 * nor the output may have more than max_pixels pixels.  Returns 0,
 * SP_E_TOOBIG or SP_E_LIMIT, with a detail in WHY. */
sp_status sp_policy_accept(const struct sp_header *hdr, void *arg,
                           char *why);

#endif
