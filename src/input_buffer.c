/* The buffer a raster read into memory may reuse (input_buffer.h). */
#include "input_buffer.h"

#include <malloc.h>
#include <stdlib.h>

void *sp_reuse_take(struct sp_reuse *r, size_t n)
{
    void *p = r != NULL ? r->p : NULL;

    if (p != NULL && r->len >= n) {
        r->p = NULL;
        return p;
    }
    return malloc(n ? n : 1);
}

void sp_reuse_give(struct sp_reuse *r, void *p, size_t len)
{
    if (r == NULL || (r->p != NULL && r->len >= len)) {
        free(p);
        return;
    }
    free(r->p);
    r->p = p;
    r->len = len;
}

void sp_reuse_drop(struct sp_reuse *r)
{
    free(r->p);
    r->p = NULL;
    r->len = 0;
}

static enum sp_buffer_policy buffer_policy;
static __thread struct sp_reuse kept;

void sp_buffer_policy(enum sp_buffer_policy policy)
{
    buffer_policy = policy;
    if (policy == SP_BUFFER_FRESH)
        (void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

struct sp_reuse *sp_buffer_thread(void)
{
    return buffer_policy == SP_BUFFER_REUSE ? &kept : NULL;
}

void sp_buffer_drop(void)
{
    sp_reuse_drop(&kept);
}
