/* input_buffer.h: the buffer a raster read into memory may reuse: an
 * object its caller owns and passes to sp_input_open() (input.h).
 *
 * With one, an input keeps the buffer of the image it releases (the
 * larger, if it holds one already) and loads the next image read into
 * memory into it when it is large enough; without one (NULL) every raster
 * is malloc'd and freed.  One sp_reuse serves one input at a time. */
#ifndef SP_INPUT_BUFFER_H
#define SP_INPUT_BUFFER_H

#include <stddef.h>

struct sp_reuse {
    void *p;        /* the buffer kept, or NULL */
    size_t len;     /* its bytes */
};

/* sp_reuse_take: a buffer of N bytes: R's if it is large enough (R then
 * keeps none), else a new malloc (NULL: no memory).  R may be NULL. */
void *sp_reuse_take(struct sp_reuse *r, size_t n);

/* sp_reuse_give: P (LEN bytes, from sp_reuse_take or malloc) kept in R,
 * or freed: when R is NULL or keeps a buffer as large already. */
void sp_reuse_give(struct sp_reuse *r, void *p, size_t len);

/* sp_reuse_drop: free the buffer R keeps, if it keeps one. */
void sp_reuse_drop(struct sp_reuse *r);

/* What a batch does with its read buffers (--read-buffer): FREE, a
 * one-file run's, malloc and free each raster; REUSE, each worker passes
 * an sp_reuse of its own to its jobs; FRESH, each raster is new pages, as
 * the Sun study's one image a process was, once the program has called
 * sp_buffer_fresh_pages(). */
enum sp_buffer_policy { SP_BUFFER_FREE, SP_BUFFER_REUSE, SP_BUFFER_FRESH };

/* sp_buffer_fresh_pages: fix glibc's mmap threshold at its default, so
 * that it does not grow to serve a large buffer from the heap after the
 * first is freed: every raster buffer is then a mapping of new pages.  A
 * setting of the process's allocator, so the program's to make (main's
 * --read-buffer fresh), once, before any load; the library never does. */
void sp_buffer_fresh_pages(void);

#endif
