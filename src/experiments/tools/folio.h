/* folio.h: how a cached file sits in memory, measured rather than
 * assumed: the sizes of the folios that hold its pages, and how many pages
 * one fault on a fresh mapping of it maps (fault-around).  Both map the
 * file and read /proc/self/pagemap; folio sizes also read
 * /proc/kpageflags, which needs CAP_SYS_ADMIN (without it the kernel
 * hides the frame numbers: EPERM).  Neither reads a page that is not
 * already cached, so neither changes what it measures. */
#ifndef SP_FOLIO_H
#define SP_FOLIO_H

#include <stddef.h>

#include "status.h"

#define SP_FOLIO_ORDERS 12  /* folios of 1 to 2^11 pages */

struct sp_folios {
    size_t count[SP_FOLIO_ORDERS];  /* folios of 2^k pages */
    size_t odd;                     /* folios of any other size */
    size_t odd_pages;               /* the pages in those */
    size_t uncached;                /* the file's pages not cached */
};

/* sp_folios_of: the folios holding PATH's cached pages, into *F.
 * Returns 0, EPERM (frame numbers hidden) or another errno value. */
sp_status sp_folios_of(const char *path, struct sp_folios *f);

/* sp_fault_around: how many of PATH's pages one read fault maps: a fresh
 * shared mapping, one byte read from the page at PAGE_INDEX, then the
 * mapping's present pages counted.  That page and its neighbours should
 * be cached (check sp_cache_resident first).  Returns 0, SP_E_USAGE
 * (PAGE_INDEX beyond the file) or an errno value. */
sp_status sp_fault_around(const char *path, size_t page_index,
                          size_t *pages);

#endif
