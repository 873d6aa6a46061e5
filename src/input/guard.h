/* guard.h: turn a SIGBUS in a thread that reads a mapped file into an
 * error status.
 *
 * MAP_PRIVATE does not snapshot a file: it shares the page cache until the
 * process writes.  When another process truncates the file while it is
 * mapped, the next access past the new end raises SIGBUS.  A thread that
 * reads a mapping does so through sp_guard_run(); the process-wide SIGBUS
 * handler (installed on first use) jumps back to that call, which then
 * returns SP_E_CHANGED.  A SIGBUS anywhere else goes to the handler that
 * was installed before the first use (a program's cleanup), then kills
 * the process as it would without the handler. */
#ifndef SP_GUARD_H
#define SP_GUARD_H

#include "status.h"

/* sp_guard_run: run FN(ARG) in this thread with SIGBUS turned into
 * SP_E_CHANGED.  FN must leave nothing allocated that a jump out of it
 * would leak.  Returns FN's status, SP_E_CHANGED, or an errno value when
 * the handler cannot be installed. */
sp_status sp_guard_run(sp_status (*fn)(void *arg), void *arg);

#endif
