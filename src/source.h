/* source.h: the row source: how the scaling side gets a loaded input's
 * rows, whatever path loaded it.
 *
 *   sp_source_open()        -> take a loaded image (sp_load)
 *   sp_source_rows()        -> a view of rows [y0, y1)
 *   sp_source_done_before() -> rows before y will not be asked for again
 *   sp_source_guard()       -> run the reads of rows under the backend's
 *                              protection
 *   sp_source_release()     -> give everything back
 *
 * One backend a load path, each in a file of its own and picked by the
 * image's backing (source.c's table): memory (source_memory.c: read,
 * standard input, plain rasters decoded), mmap (source_mmap.c: the
 * mapping, its SIGBUS guard, pages given back as rows are done) and pread
 * (source_pread.c: rows read when asked, into the caller's scratch).  The
 * caller never asks which one it holds.
 *
 * Threads may call sp_source_rows() and sp_source_guard() at once, each
 * with scratch of its own; sp_source_done_before() one thread at a time. */
#ifndef SP_SOURCE_H
#define SP_SOURCE_H

#include <stddef.h>

#include "image.h"
#include "status.h"

struct sp_source;

/* A backend: what its path does for each call below. */
struct sp_source_ops {
    /* the address of rows [y0, y1), packed at the image's stride: in the
     * image, or read into SCRATCH; NULL with *ST set on failure */
    const unsigned char *(*rows)(struct sp_source *s, size_t y0, size_t y1,
                                 unsigned char *scratch, sp_status *st);
    /* bytes of scratch a request of ROWS rows needs (0: none) */
    size_t (*scratch)(const struct sp_source *s, size_t rows);
    void (*done_before)(struct sp_source *s, size_t y);
    sp_status (*guard)(sp_status (*fn)(void *arg), void *arg);
};

extern const struct sp_source_ops sp_source_memory, sp_source_mmap,
    sp_source_pread;

/* A row source.  IMG's layout (width, height, stride, channels,
 * bytes, maxval) is the caller's to read; the rest is the
 * backend's. */
struct sp_source {
    const struct sp_source_ops *ops;
    struct sp_image img;
    size_t grain;          /* mmap: pages go back in blocks ending on
                              multiples of this (a power of two) */
};

/* sp_source_open: make S the row source of IMG, a loaded image (sp_load),
 * which S now owns (IMG is left empty).  GRAIN, for a backend that gives
 * pages back (mmap), is the block they go back in, a power of two of at
 * least a page; 0 picks the backend's default.  Cannot fail. */
void sp_source_open(struct sp_source *s, struct sp_image *img, size_t grain);

/* sp_source_rows: rows [Y0, Y1) of S (Y0 < Y1 <= height) as BAND, an
 * unbacked view (nothing to release) of Y1 - Y0 rows, valid until the next
 * call with the same SCRATCH.  SCRATCH holds sp_source_scratch(S, Y1 - Y0)
 * bytes.  Returns 0, an errno value, or SP_E_CHANGED (the file ended
 * before the rows: it shrank after it was checked). */
sp_status sp_source_rows(struct sp_source *s, size_t y0, size_t y1,
                         unsigned char *scratch, struct sp_image *band);

/* sp_source_scratch: the bytes of scratch a request of ROWS rows needs;
 * 0 when S's rows are in memory already. */
size_t sp_source_scratch(const struct sp_source *s, size_t rows);

/* sp_source_done_before: rows before Y will not be asked for again: the
 * backend may give back the memory that held them (mmap: madvise
 * MADV_DONTNEED, in GRAIN blocks; the page cache keeps the pages).
 * Advice only: nothing fails. */
void sp_source_done_before(struct sp_source *s, size_t y);

/* sp_source_guard: FN(ARG), in this thread, with the faults that S's
 * rows can raise (a mapped file that shrinks: SIGBUS, see guard.h) turned
 * into SP_E_CHANGED.  FN must leave nothing allocated that a jump out of
 * it would leak.  Returns FN's status, SP_E_CHANGED, or an errno value. */
sp_status sp_source_guard(const struct sp_source *s,
                          sp_status (*fn)(void *arg), void *arg);

/* sp_source_check: whether the file S reads is still as it was loaded
 * (sp_image_check); call it after the last row is read and before the
 * output is committed.  Returns 0, SP_E_CHANGED or an errno value. */
sp_status sp_source_check(const struct sp_source *s);

/* sp_source_release: release S's image (sp_image_release) and forget it.
 * Safe on a source released already.  Returns 0 or munmap's errno. */
sp_status sp_source_release(struct sp_source *s);

/* The memory backend's calls, which the other backends share where their
 * path does nothing different (source_memory.c). */
const unsigned char *sp_source_in_place(struct sp_source *s, size_t y0,
                                        size_t y1, unsigned char *scratch,
                                        sp_status *st);
size_t sp_source_no_scratch(const struct sp_source *s, size_t rows);
void sp_source_keep(struct sp_source *s, size_t y);
sp_status sp_source_unguarded(sp_status (*fn)(void *arg), void *arg);

#endif
