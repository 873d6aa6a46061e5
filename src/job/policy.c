#include "policy.h"

#include <stdio.h>

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

sp_status sp_policy_accept(const struct sp_header *hdr, void *arg, char *why)
{
    const struct sp_policy *p = arg;
    sp_status st = sp_scale_size(hdr->width, hdr->height, p->factor,
                                 p->out_width, p->out_height);

    if (st == SP_E_TOOBIG)
        snprintf(why, SP_WHY_MAX, "scaled by %d it would be larger than "
                 "memory can address", p->factor);
    if (st == SP_OK &&
        (over_limit(why, "the input", hdr->width, hdr->height,
                    p->max_pixels) ||
         over_limit(why, "the output", *p->out_width, *p->out_height,
                    p->max_pixels)))
        st = SP_E_LIMIT;
    return st;
}
