/* replay: run a fuzz harness over files, without libFuzzer.
 *
 *   replay_HARNESS PATH...
 *
 * Each PATH is a file, or a directory whose files (not those starting
 * with a dot) are each one input.  A finding ends the run as it would end
 * the fuzzer: by a sanitizer report, a signal, or a trap; an exit() from
 * inside the harness is turned into an abort.  Exits 0 when every input
 * ran, 1 when a path cannot be read or no input was found at all (so a
 * regression test never passes on nothing), 2 on usage.  One allocation
 * of more than ALLOC_MAX is a finding too, as libFuzzer's -malloc_limit_mb
 * makes it one (scripts/fuzz.sh): a decoder that sizes a buffer from what
 * a header claims before the claim is checked. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* asprintf */
#endif
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static const char *current;  /* the input inside the harness, else NULL */

/* The most bytes one allocation may ask for (fuzz.sh's -malloc_limit_mb). */
#define ALLOC_MAX ((size_t)1 << 30)

#if defined(__SANITIZE_ADDRESS__)
/* ASan's allocator reports a larger one (the sanitizer build). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "max_allocation_size_mb=1024";
}
#else
/* glibc's allocator under the wrappers below, which every call to malloc,
 * calloc and realloc in the program reaches (libpng's and libjpeg's
 * static archives' too). */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);

static void check_size(size_t n, size_t size)
{
    if (size != 0 && n > ALLOC_MAX / size) {
        fprintf(stderr, "replay: %s: an allocation of %zu x %zu bytes, more "
                "than %zu\n", current ? current : "(outside the harness)",
                n, size, ALLOC_MAX);
        abort();
    }
}

void *malloc(size_t n)
{
    check_size(n, 1);
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    check_size(n, size);
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    check_size(n, 1);
    return __libc_realloc(p, n);
}
#endif

static void exit_in_harness(void)
{
    if (current != NULL) {
        fprintf(stderr, "replay: %s: the harness called exit()\n", current);
        abort();
    }
}

/* run_file: the harness on the bytes of PATH.  Returns 0 or -1. */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (f == NULL) {
        perror(path);
        return -1;
    }
    do {
        if (len == cap) {
            unsigned char *p = realloc(buf, cap = cap ? 2 * cap : 4096);
            if (p == NULL) {
                fprintf(stderr, "replay: %s: out of memory\n", path);
                free(buf);
                fclose(f);
                return -1;
            }
            buf = p;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    if (ferror(f)) {
        perror(path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    current = path;
    LLVMFuzzerTestOneInput(buf, len);
    current = NULL;
    free(buf);
    return 0;
}

/* run_path: a file, or each file in a directory.  Adds the inputs run to
 * *COUNT; returns 0 or -1. */
static int run_path(const char *path, unsigned *count)
{
    struct stat sb;
    struct dirent **names;
    int n, rc = 0;

    if (stat(path, &sb) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        if (run_file(path) != 0)
            return -1;
        ++*count;
        return 0;
    }
    n = scandir(path, &names, NULL, alphasort);
    if (n < 0) {
        perror(path);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char *sub;

        if (names[i]->d_name[0] != '.' &&
            asprintf(&sub, "%s/%s", path, names[i]->d_name) >= 0) {
            if (stat(sub, &sb) == 0 && S_ISREG(sb.st_mode)) {
                if (run_file(sub) != 0)
                    rc = -1;
                else
                    ++*count;
            }
            free(sub);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    int rc = 0;

    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        fprintf(argc < 2 ? stderr : stdout, "usage: %s PATH...\n", argv[0]);
        return argc < 2 ? 2 : 0;
    }
    atexit(exit_in_harness);
    for (int i = 1; i < argc; i++)
        if (run_path(argv[i], &count) != 0)
            rc = 1;
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        rc = 1;
    }
    fprintf(stderr, "replay: %u inputs, %s\n", count, rc ? "FAILED" : "ok");
    return rc;
}
