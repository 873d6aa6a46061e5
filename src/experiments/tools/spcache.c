/* spcache: the page-cache helper of the experiment driver.
 *   spcache evict FILE          drop FILE's pages from the page cache
 *                               (fails when more than 1% stay)
 *   spcache resident FILE       print "RESIDENT TOTAL" pages of FILE cached
 *   spcache copy BLOCK SRC DST  copy SRC to DST in write()s of BLOCK bytes
 *   spcache folios FILE         print the folios holding FILE's cached
 *                               pages: "KIB:COUNT ..." by folio size, then
 *                               "uncached:PAGES" (needs root)
 *   spcache faultaround FILE    print how many pages one read fault on a
 *                               fresh mapping of FILE maps (its middle) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "folio.h"

static int fail(const char *path, sp_status st)
{
    fprintf(stderr, "spcache: %s: %s\n", path, sp_strerror(st));
    return 1;
}

static int print_folios(const char *path)
{
    size_t page_kib = (size_t)sysconf(_SC_PAGESIZE) / 1024;
    struct sp_folios f;
    sp_status st = sp_folios_of(path, &f);

    if (st != SP_OK)
        return fail(path, st);
    for (unsigned k = 0; k < SP_FOLIO_ORDERS; k++)
        if (f.count[k] > 0)
            printf("%zu:%zu ", page_kib << k, f.count[k]);
    if (f.odd > 0)
        printf("odd:%zu/%zu ", f.odd, f.odd_pages);
    printf("uncached:%zu\n", f.uncached);
    return 0;
}

static int print_fault_around(const char *path)
{
    size_t resident, total, pages;
    sp_status st = sp_cache_resident(path, &resident, &total);

    if (st == SP_OK)
        st = sp_fault_around(path, total / 2, &pages);
    if (st != SP_OK)
        return fail(path, st);
    printf("%zu\n", pages);
    return 0;
}

int main(int argc, char **argv)
{
    sp_status st;

    if (argc == 3 && strcmp(argv[1], "evict") == 0) {
        st = sp_cache_evict(argv[2]);
        return st == SP_OK ? 0 : fail(argv[2], st);
    }
    if (argc == 3 && strcmp(argv[1], "resident") == 0) {
        size_t resident, total;
        st = sp_cache_resident(argv[2], &resident, &total);
        if (st != SP_OK)
            return fail(argv[2], st);
        printf("%zu %zu\n", resident, total);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "copy") == 0) {
        char *end;
        unsigned long block = strtoul(argv[2], &end, 10);
        if (*end != '\0' || block == 0) {
            fprintf(stderr, "spcache: bad block size '%s'\n", argv[2]);
            return 2;
        }
        st = sp_cache_copy(argv[3], argv[4], block);
        return st == SP_OK ? 0 : fail(argv[4], st);
    }
    if (argc == 3 && strcmp(argv[1], "folios") == 0)
        return print_folios(argv[2]);
    if (argc == 3 && strcmp(argv[1], "faultaround") == 0)
        return print_fault_around(argv[2]);
    fprintf(stderr, "usage: spcache evict FILE | resident FILE | "
            "copy BLOCK SRC DST | folios FILE | faultaround FILE\n");
    return 2;
}
