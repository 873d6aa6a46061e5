/* cancel.h: a cancellation token, which the caller of a job or a batch
 * owns and passes (sp_job.cancel): no global says "stop".
 *
 * Once set it stays set; each job that holds it stops before its next
 * image or item and fails with EINTR, its output not written.  Any thread
 * may set it, a signal thread or another job (a batch's --fail-fast)
 * among them; setting and reading are lock-free (an atomic), so a token
 * may also be set from a signal handler.  Jobs that do not share a token
 * do not stop each other. */
#ifndef SP_CANCEL_H
#define SP_CANCEL_H

#include <stdatomic.h>

struct sp_cancel {
    atomic_int set;  /* 0 until cancelled; zero-initialised is live */
};

/* sp_cancel_set: C cancelled. */
static inline void sp_cancel_set(struct sp_cancel *c)
{
    atomic_store_explicit(&c->set, 1, memory_order_relaxed);
}

/* sp_cancelled: whether C (NULL: a token never set) is cancelled. */
static inline int sp_cancelled(struct sp_cancel *c)
{
    return c != NULL && atomic_load_explicit(&c->set, memory_order_relaxed);
}

#endif
