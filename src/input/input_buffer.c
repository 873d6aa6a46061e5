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

void sp_buffer_fresh_pages(void)
{
    (void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}
