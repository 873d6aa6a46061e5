/* cache.h: control and inspect a file's pages in the page cache, for the
 * experiment driver's --cache and --page-cache.
 *
 * Releasing an image with madvise(MADV_DONTNEED) drops only the process's
 * mapping; the file stays cached.  A cold run must evict the file itself,
 * and say it did: sp_cache_evict() then sp_cache_resident(). */
#ifndef SP_CACHE_H
#define SP_CACHE_H

#include <stddef.h>

#include "status.h"

/* sp_cache_evict: write back PATH's dirty pages and ask the kernel to drop
 * all its cached pages (posix_fadvise POSIX_FADV_DONTNEED), until at most
 * 1% of them are left.  Pages mapped or being read by another process stay
 * for that while (a test beside this one reading the same image): tried 20
 * times, 50 ms apart.  Returns 0, EBUSY (still more than 1% cached), or
 * another errno value. */
sp_status sp_cache_evict(const char *path);

/* sp_cache_resident: how many of PATH's pages are in the page cache
 * (mincore over a mapping of the file), in *RESIDENT of *TOTAL.  Reading
 * the map does not fault pages in.  Returns 0 or an errno value. */
sp_status sp_cache_resident(const char *path, size_t *resident,
                            size_t *total);

/* sp_cache_copy: copy SRC to DST (created or truncated) with write()s of
 * BLOCK bytes.  Written in 4 KiB writes, a file sits in the page cache in
 * 4 KiB pages; in large writes, in large folios: which changes how much
 * one mmap fault maps.  Returns 0, SP_E_USAGE (BLOCK 0), EINVAL (DST is
 * SRC), EISDIR, or another errno value. */
sp_status sp_cache_copy(const char *src, const char *dst, size_t block);

#endif
