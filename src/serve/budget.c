/* --max-memory: a job's bytes, and the ledger (budget.h). */
#include "budget.h"

#include <errno.h>

#include "job_types.h"
#include "policy.h"

/* mul: A * B, saturating. */
static uint64_t mul(uint64_t a, uint64_t b)
{
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* side: a side of N pixels scaled by FACTOR (a reduce rounds up). */
static uint64_t side(uint64_t n, int factor)
{
    if (factor >= 1)
        return mul(n, (uint64_t)factor);
    if (factor <= -1)
        return (n + (uint64_t)-factor - 1) / (uint64_t)-factor;
    return n;
}

/* out_pixels: the pixels of HDR's output, scaled by FACTOR or fitted to
 * FIT as sp_policy_accept sizes it: a fit keeps an image already inside
 * its box unless it enlarges; a crop's is the box, at most (a crop of an
 * image that covering would enlarge, without ENLARGE, is of no more than
 * the image's sides; else the whole box). */
static uint64_t out_pixels(const struct sp_header *hdr, int factor,
                           const struct sp_fit *fit)
{
    size_t ow, oh;

    if (fit == NULL || (fit->width == 0 && fit->height == 0))
        return mul(side(hdr->width, factor), side(hdr->height, factor));
    if (fit->crop)  /* the box, or no more of the image unless enlarged */
        return fit->enlarge
                   ? mul(fit->width, fit->height)
                   : mul(fit->width < hdr->width ? fit->width : hdr->width,
                         fit->height < hdr->height ? fit->height
                                                   : hdr->height);
    sp_fit_size(fit, hdr->width, hdr->height, &ow, &oh);
    if (!fit->enlarge && ow >= hdr->width && oh >= hdr->height)
        return mul(hdr->width, hdr->height);
    return mul(ow, oh);
}

uint64_t sp_serve_cost(const struct sp_header *hdr, int factor,
                       const struct sp_fit *fit, int held, int stb,
                       unsigned threads)
{
    uint64_t chunks = mul(2 * SP_CHUNK, threads ? threads : 1);
    uint64_t raster = mul(mul(mul(hdr->width, hdr->height), hdr->channels),
                          hdr->sample_size ? hdr->sample_size : 1);
    uint64_t in = held ? raster : chunks, out = chunks;

    if (stb) {
        unsigned ch = hdr->channels > 4 ? 4 : hdr->channels;

        /* the image in 8 bits, and its encoding, at most as large */
        out = mul(mul(out_pixels(hdr, factor, fit), ch), 2);
    }
    return add(in, out);
}

uint64_t sp_serve_body(const struct sp_header *hdr, int factor,
                       const struct sp_fit *fit)
{
    return mul(mul(out_pixels(hdr, factor, fit), hdr->channels),
               hdr->sample_size ? hdr->sample_size : 1);
}

void sp_budget_init(struct sp_budget *b, uint64_t budget)
{
    pthread_mutex_init(&b->mu, NULL);
    b->budget = budget;
    b->used = 0;
}

void sp_budget_destroy(struct sp_budget *b)
{
    pthread_mutex_destroy(&b->mu);
}

int sp_budget_take(struct sp_budget *b, uint64_t cost)
{
    int st = 0;

    if (b->budget == 0)
        return 0;
    if (cost > b->budget)
        return EFBIG;
    pthread_mutex_lock(&b->mu);
    if (cost > b->budget - b->used)
        st = EAGAIN;
    else
        b->used += cost;
    pthread_mutex_unlock(&b->mu);
    return st;
}

uint64_t sp_budget_used(struct sp_budget *b)
{
    uint64_t used;

    pthread_mutex_lock(&b->mu);
    used = b->used;
    pthread_mutex_unlock(&b->mu);
    return used;
}

void sp_budget_give(struct sp_budget *b, uint64_t cost)
{
    if (b->budget == 0)
        return;
    pthread_mutex_lock(&b->mu);
    b->used -= cost <= b->used ? cost : b->used;
    pthread_mutex_unlock(&b->mu);
}
