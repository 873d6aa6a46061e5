/* source.h: the row source: how the scaling side gets the rows of an
 * input's image, whatever path loaded it.
 *
 *   sp_source_open()        -> the image an input holds (sp_input_next)
 *   sp_source_rows()        -> a view of rows [y0, y1)
 *   sp_source_done_before() -> rows before y will not be asked for again
 *   sp_source_guard()       -> run the reads of rows under the path's
 *                              protection
 *   sp_source_check()       -> whether the file read is still as loaded
 *   sp_source_release()     -> give the image back to its input
 *
 * Each call is the load path's (input_path.h: read, mmap, pread, stream,
 * one file each); the caller never asks which one it holds.
 *
 * Threads may call sp_source_rows() and sp_source_guard() at once, each
 * with scratch of its own; sp_source_done_before() one thread at a time. */
#ifndef SP_SOURCE_H
#define SP_SOURCE_H

#include <stddef.h>

#include "image.h"
#include "status.h"

struct sp_input;

/* A row source.  IMG's layout (width, height, stride, channels, bytes,
 * maxval) is the caller's to read; IN is the input that holds the image. */
struct sp_source {
    struct sp_image img;
    struct sp_input *in;
};

/* sp_source_open: make S the row source of the image IN holds (loaded by
 * sp_input_next), until sp_source_release() gives it back to IN.  GRAIN,
 * for a path that gives pages back (mmap), is the block they go back in,
 * a power of two of at least a page; 0 picks the path's default.  Cannot
 * fail. */
void sp_source_open(struct sp_source *s, struct sp_input *in, size_t grain);

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
 * path may give back the memory that held them (mmap: madvise
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
 * (the input's stamp; 0 for an image in memory); call it after the last row is read and before the
 * output is committed.  Returns 0, SP_E_CHANGED or an errno value. */
sp_status sp_source_check(const struct sp_source *s);

/* sp_source_release: give S's image back to its input
 * (sp_input_release) and forget it.  Safe on a source released already.
 * Returns 0 or munmap's errno. */
sp_status sp_source_release(struct sp_source *s);

#endif
