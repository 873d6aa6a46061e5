#include "folio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys.h"

/* /proc/self/pagemap: one 64-bit entry a virtual page
 * (Documentation/admin-guide/mm/pagemap.rst). */
#define PM_PRESENT (1ull << 63)
#define PM_PFN_MASK ((1ull << 55) - 1)
/* /proc/kpageflags: one 64-bit set of flags a page frame. */
#define KPF_COMPOUND_HEAD (1ull << 15)
#define KPF_COMPOUND_TAIL (1ull << 16)

struct mapped {
    unsigned char *base;
    size_t len, pages;
};

/* map_file: PATH mapped shared and read-only, in *M (empty for an empty
 * file). */
static sp_status map_file(const char *path, struct mapped *m)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    struct stat sb;
    sp_status st = SP_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    m->base = NULL;
    m->len = m->pages = 0;
    if (fd < 0)
        return errno;
    if (fstat(fd, &sb) != 0) {
        st = errno;
    } else if (sb.st_size > 0) {
        m->len = (size_t)sb.st_size;
        m->pages = (m->len + page - 1) / page;
        m->base = mmap(NULL, m->len, PROT_READ, MAP_SHARED, fd, 0);
        if (m->base == MAP_FAILED) {
            st = errno;
            m->base = NULL;
        }
    }
    close(fd);
    return st;
}

static void unmap_file(struct mapped *m)
{
    if (m->base != NULL)
        munmap(m->base, m->len);
}

/* pagemap: M's pagemap entries, M->pages of them, into a new array. */
static sp_status pagemap(const struct mapped *m, uint64_t **entries)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), got;
    off_t at = (off_t)((uintptr_t)m->base / page * sizeof(uint64_t));
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    sp_status st;

    if (fd < 0)
        return errno;
    *entries = malloc(m->pages * sizeof **entries);
    if (*entries == NULL) {
        close(fd);
        return ENOMEM;
    }
    st = sp_sys_pread_full(fd, *entries, m->pages * sizeof **entries, at,
                           &got);
    if (st == SP_OK && got != m->pages * sizeof **entries)
        st = EIO;
    close(fd);
    if (st != SP_OK) {
        free(*entries);
        *entries = NULL;
    }
    return st;
}

/* tally: a folio of N pages into F. */
static void tally(struct sp_folios *f, size_t n)
{
    for (unsigned k = 0; k < SP_FOLIO_ORDERS; k++)
        if (n == (size_t)1 << k) {
            f->count[k]++;
            return;
        }
    f->odd++;
    f->odd_pages += n;
}

/* walk: the folios of M's present pages, in file order: a compound head
 * starts a folio, its tails follow it; any other page is a folio of one. */
static sp_status walk(const uint64_t *pm, size_t pages, int kpf,
                      struct sp_folios *f)
{
    size_t run = 0;

    for (size_t i = 0; i < pages; i++) {
        uint64_t flags, pfn = pm[i] & PM_PFN_MASK;
        size_t got;
        sp_status st;

        if (!(pm[i] & PM_PRESENT)) {
            f->uncached++;
            continue;
        }
        if (pfn == 0)
            return EPERM;
        st = sp_sys_pread_full(kpf, &flags, sizeof flags,
                               (off_t)(pfn * sizeof flags), &got);
        if (st != SP_OK)
            return st;
        if (got != sizeof flags)
            return EIO;
        if ((flags & KPF_COMPOUND_TAIL) && run > 0) {
            run++;
            continue;
        }
        if (run > 0)
            tally(f, run);
        run = 1;
    }
    if (run > 0)
        tally(f, run);
    return SP_OK;
}

sp_status sp_folios_of(const char *path, struct sp_folios *f)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    struct mapped m;
    unsigned char *vec = NULL;
    uint64_t *pm = NULL;
    sp_status st;
    int kpf = -1;

    *f = (struct sp_folios){0};
    st = map_file(path, &m);
    if (st != SP_OK || m.pages == 0)
        return st;
    vec = malloc(m.pages);
    if (vec == NULL)
        st = ENOMEM;
    else if (mincore(m.base, m.len, vec) != 0)
        st = errno;
    /* map the cached pages, and only those: a read of one that is not
     * cached would bring it in */
    for (size_t i = 0; st == SP_OK && i < m.pages; i++)
        if (vec[i] & 1)
            (void)*(volatile unsigned char *)(m.base + i * page);
    if (st == SP_OK)
        st = pagemap(&m, &pm);
    if (st == SP_OK) {
        kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
        st = kpf < 0 ? errno : walk(pm, m.pages, kpf, f);
    }
    if (kpf >= 0)
        close(kpf);
    free(pm);
    free(vec);
    unmap_file(&m);
    return st;
}

sp_status sp_fault_around(const char *path, size_t page_index,
                          size_t *pages)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    struct mapped m;
    uint64_t *pm = NULL;
    sp_status st;

    *pages = 0;
    st = map_file(path, &m);
    if (st == SP_OK && page_index >= m.pages)
        st = SP_E_USAGE;
    if (st == SP_OK) {
        (void)*(volatile unsigned char *)(m.base + page_index * page);
        st = pagemap(&m, &pm);
    }
    for (size_t i = 0; st == SP_OK && i < m.pages; i++)
        *pages += (pm[i] & PM_PRESENT) != 0;
    free(pm);
    unmap_file(&m);
    return st;
}
