/* deadline.h: a watch over the jobs running, which cancels each one whose
 * deadline passes (its token, cancel.h: the job stops before its next
 * item and fails with EINTR), so that no request holds a worker past the
 * time the server gives it; and over the connections that owe a
 * request's header, each shut down once its deadline passes, so that a
 * client sending a byte now and then cannot hold one.  One thread for
 * all, waking every tick; a job enters it when it starts and leaves when
 * it ends, a connection while its header is due. */
#ifndef SP_SERVE_DEADLINE_H
#define SP_SERVE_DEADLINE_H

#include <stddef.h>  /* NULL, for cancel.h */
#include <stdint.h>

#include "cancel.h"
#include "status.h"

struct sp_watch;

/* sp_watch_start: a watch over at most SLOTS jobs at once, looking every
 * TICK_MS milliseconds, into *W.  Returns 0 or an errno value. */
sp_status sp_watch_start(struct sp_watch **w, unsigned slots,
                         unsigned tick_ms);

/* sp_watch_enter: C to be set once sp_now_ns() passes DEADLINE_NS.
 * Returns the slot to leave, or -1 when every slot is taken (C is then
 * not watched). */
int sp_watch_enter(struct sp_watch *w, struct sp_cancel *c,
                   uint64_t deadline_ns);

/* sp_watch_enter_socket: the socket FD to be shut down (both ways)
 * once sp_now_ns() passes DEADLINE_NS, and at every tick after, until it
 * leaves: the caller leaves before it closes FD, so that a descriptor
 * number used again is never shut down.  Returns the slot to leave, or
 * -1 when every slot is taken (FD is then not watched). */
int sp_watch_enter_socket(struct sp_watch *w, int fd, uint64_t deadline_ns);

/* sp_watch_leave: SLOT's job is done, or its socket's wait: no longer
 * watched (a token is the caller's again, and may be freed).  A SLOT of
 * -1 is nothing to leave. */
void sp_watch_leave(struct sp_watch *w, int slot);

/* sp_watch_stop: end W's thread and free W. */
void sp_watch_stop(struct sp_watch *w);

#endif
