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

/* The program's policy, until the caller owns its sp_reuse (batch.h):
 * SP_BUFFER_REUSE gives each thread a buffer of its own, that
 * sp_buffer_thread() returns; SP_BUFFER_FRESH has every image malloc a
 * buffer of pages never touched, as the Sun study's one image a process
 * did: glibc's mmap threshold is fixed at its default, so it does not grow
 * to serve a large buffer from the heap after the first is freed.  Set
 * once, before any thread loads. */
enum sp_buffer_policy { SP_BUFFER_FREE, SP_BUFFER_REUSE, SP_BUFFER_FRESH };
void sp_buffer_policy(enum sp_buffer_policy policy);

/* sp_buffer_thread: this thread's sp_reuse under SP_BUFFER_REUSE, else
 * NULL. */
struct sp_reuse *sp_buffer_thread(void);

/* sp_buffer_drop: free the buffer this thread's sp_reuse keeps. */
void sp_buffer_drop(void);

#endif
