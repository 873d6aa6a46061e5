/* The mmap backend: the raster used in place inside the mapping, read
 * under the SIGBUS guard (guard.h: a file truncated under the mapping
 * faults), and given back to the kernel as the rows before the ones still
 * wanted are done, in blocks of the source's grain: a process streaming
 * through a mapped input does not keep it all resident.  The release
 * (sp_image_release) gives back the rest and unmaps. */
#include "source.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guard.h"
#include "sys.h"

/* DROP_GRAIN_MAX: the largest block pages go back in (see default_grain);
 * the size of the largest folio the kernel maps a file's page cache in. */
#define DROP_GRAIN_MAX ((size_t)2 << 20)

/* default_grain: for a mapping of LEN bytes, a 64th of it, a power of two
 * from a page to DROP_GRAIN_MAX.  Each madvise() flushes the TLB of every
 * CPU running the job, so a large input goes back in large blocks; a
 * small one in smaller blocks, or it would stay mapped whole.
 * results/README.md ("design notes") has the measurements. */
static size_t default_grain(size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), grain = DROP_GRAIN_MAX;

    while (grain / 2 >= page && grain > len / 64)
        grain /= 2;
    return grain;
}

/* done_before: give back the memory wholly before row Y, in blocks that
 * end on a multiple of the grain of address; what was given back is
 * counted in the image's DROPPED, which the release starts from. */
static void done_before(struct sp_source *s, size_t y)
{
    struct sp_image *img = &s->img;
    uintptr_t base = (uintptr_t)img->base, end;

    if (y == 0)
        return;
    if (s->grain == 0)
        s->grain = default_grain(img->base_len);
    end = (uintptr_t)img->pixels + y * img->stride;
    if (end > base + img->base_len)
        end = base + img->base_len;
    end &= ~(uintptr_t)(s->grain - 1);
    if (end <= base + img->dropped)
        return;
    (void)sp_sys.madvise((unsigned char *)img->base + img->dropped,
                         end - base - img->dropped, MADV_DONTNEED);
    img->dropped = end - base;
}

const struct sp_source_ops sp_source_mmap = {
    .rows = sp_source_in_place,
    .scratch = sp_source_no_scratch,
    .done_before = done_before,
    .guard = sp_guard_run,
};
