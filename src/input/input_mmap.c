/* The mmap path: map the whole file PROT_READ, MAP_PRIVATE and use the
 * raster in place at the header's offset; read its rows under the SIGBUS
 * guard (guard.h: a file truncated under the mapping faults), check the
 * file's stamp through the input's descriptor (a mapping cannot be
 * fstat'ed, and a file written under it changes the pixels read), give the
 * pages back to the kernel as the rows before the ones still wanted are
 * done, in blocks of the input's grain (a process streaming through a
 * mapped input does not keep it all resident), and at the release give
 * back the rest (madvise(MADV_DONTNEED)) and munmap() exactly what was
 * mapped. */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guard.h"
#include "input.h"
#include "input_path.h"
#include "sys.h"

static sp_status load(struct sp_input *in, const struct sp_header *hdr)
{
    size_t file_size = (size_t)in->stamp.size;
    void *map;

    /* No mapping without the SIGBUS guard (sp_init() installs it): a file
     * cut under it would kill the process.  input.c reads instead, and
     * the report says so. */
    if (!sp_guard_ready())
        return ENOTSUP;
    /* The raster must lie inside what is mapped: the size taken at open
     * is both the size it was checked against and the length mapped. */
    if (hdr->raster_offset < 0 ||
        (size_t)hdr->raster_offset > file_size ||
        hdr->raster_bytes > file_size - (size_t)hdr->raster_offset)
        return SP_E_TRUNCATED;
    map = sp_sys.mmap(NULL, file_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
    if (map == MAP_FAILED)
        return errno;
    /* input.c compares the file's stamp now, before a page is touched: a
     * file that shrank since its size was taken would raise SIGBUS past
     * its new end, and one that changed would mix its bytes in. */
    sp_input_hold(in, hdr, map, file_size,
                  (unsigned char *)map + hdr->raster_offset);
    return SP_OK;
}

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
 * counted in HELD.DONE, which the release starts from. */
static void done_before(struct sp_input *in, size_t y)
{
    uintptr_t base = (uintptr_t)in->held.p, end;
    size_t len = in->held.len, done = in->held.done;

    if (y == 0)
        return;
    if (in->held.grain == 0)
        in->held.grain = default_grain(len);
    end = (uintptr_t)in->img.pixels + y * in->img.stride;
    if (end > base + len)
        end = base + len;
    end &= ~(uintptr_t)(in->held.grain - 1);
    if (end <= base + done)
        return;
    (void)sp_sys.madvise((unsigned char *)in->held.p + done,
                         end - base - done, MADV_DONTNEED);
    in->held.done = end - base;
}

/* release: the study's release: drop the pages, then the mapping.  An
 * madvise failure is ignored (it is advice). */
static sp_status release(struct sp_input *in)
{
    (void)sp_sys.madvise((unsigned char *)in->held.p + in->held.done,
                         in->held.len - in->held.done, MADV_DONTNEED);
    return sp_sys.munmap(in->held.p, in->held.len) != 0 ? errno : SP_OK;
}

const struct sp_input_path sp_input_mmap = {
    .io = SP_IO_MMAP,
    .load = load,
    .rows = sp_input_in_place,
    .scratch = sp_input_no_scratch,
    .done_before = done_before,
    .guard = sp_guard_run,
    .check = sp_input_stamp_check,
    .release = release,
};
