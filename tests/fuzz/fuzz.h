/* fuzz.h: what a harness exports, and what the harnesses share.
 *
 * A harness is one LLVMFuzzerTestOneInput().  Under SP_FUZZ it is linked
 * with libFuzzer; in the normal build replay.c runs it over files, so the
 * inputs kept in tests/fuzz/regress/ are replayed by ctest.  A finding is
 * anything that stops the process: a sanitizer report, a crash, an exit()
 * (libFuzzer and replay.c both treat one as a failure), or a failed check
 * of the harness's own, which traps. */
#ifndef SP_FUZZ_H
#define SP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "init.h"

/* LLVMFuzzerTestOneInput: run the harness on SIZE bytes of DATA; returns 0
 * (libFuzzer reserves other values). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* sp_fuzz_init: sp_lib_init() (the public sp_init()), as every program
 * of the library calls it; each harness's first call (idempotent, and cheap after the first input). */
static inline void sp_fuzz_init(void)
{
    if (sp_lib_init() != SP_OK)
        abort();
}

/* SP_FUZZ_CHECK: a property of the code under test; when it does not hold,
 * say which and trap, so that the input is kept as a crash. */
#define SP_FUZZ_CHECK(cond)                                                 \
    do {                                                                    \
        if (!(cond))                                                        \
            sp_fuzz_fail(__FILE__, __LINE__, #cond);                        \
    } while (0)

/* sp_fuzz_fail: print FILE:LINE: COND on stderr and trap. */
__attribute__((noreturn)) static inline void
sp_fuzz_fail(const char *file, int line, const char *cond)
{
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, cond);
    __builtin_trap();
}

/* sp_fuzz_read_all: the whole of PATH in a malloc'd buffer of *LEN
 * bytes. */
__attribute__((unused)) static unsigned char *
sp_fuzz_read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0, n;

    *len = 0;
    SP_FUZZ_CHECK(f != NULL);
    do {
        if (*len == cap) {
            cap = cap ? 2 * cap : 4096;
            buf = realloc(buf, cap);
            SP_FUZZ_CHECK(buf != NULL);
        }
        n = fread(buf + *len, 1, cap - *len, f);
        *len += n;
    } while (n > 0);
    SP_FUZZ_CHECK(!ferror(f));
    fclose(f);
    return buf;
}

/* sp_fuzz_outdir: a private directory for the harness's output files,
 * PREFIX.XXXXXX on tmpfs where there is one, made on the first call and
 * removed at exit; its path. */
__attribute__((unused)) static char sp_fuzz_dir[64];

__attribute__((unused)) static void sp_fuzz_remove_dir(void)
{
    if (sp_fuzz_dir[0] != '\0')
        rmdir(sp_fuzz_dir);
}

__attribute__((unused)) static const char *sp_fuzz_outdir(const char *prefix)
{
    static const char *const bases[] = {"/dev/shm", "/tmp"};

    for (size_t i = 0; sp_fuzz_dir[0] == '\0' && i < 2; i++) {
        snprintf(sp_fuzz_dir, sizeof sp_fuzz_dir, "%s/%s.XXXXXX", bases[i],
                 prefix);
        if (mkdtemp(sp_fuzz_dir) != NULL)
            atexit(sp_fuzz_remove_dir);
        else
            sp_fuzz_dir[0] = '\0';
    }
    SP_FUZZ_CHECK(sp_fuzz_dir[0] != '\0');
    return sp_fuzz_dir;
}

#endif
