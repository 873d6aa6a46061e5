/* spcache: the page-cache helper of the experiment driver.
 *   spcache evict FILE          drop FILE's pages from the page cache
 *   spcache resident FILE       print "RESIDENT TOTAL" pages of FILE cached
 *   spcache copy BLOCK SRC DST  copy SRC to DST in write()s of BLOCK bytes */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

static int fail(const char *path, sp_status st)
{
    fprintf(stderr, "spcache: %s: %s\n", path, sp_strerror(st));
    return 1;
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
    fprintf(stderr, "usage: spcache evict FILE | resident FILE | "
            "copy BLOCK SRC DST\n");
    return 2;
}
