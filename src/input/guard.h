/* guard.h: turn a SIGBUS in a thread that reads a mapped file into an
 * error status.
 *
 * MAP_PRIVATE does not snapshot a file: it shares the page cache until the
 * process writes.  When another process truncates the file while it is
 * mapped, the next access past the new end raises SIGBUS.  A thread that
 * reads a mapping does so through sp_guard_run(); the process-wide SIGBUS
 * handler jumps back to that call, which then returns SP_E_CHANGED.  A
 * SIGBUS anywhere else goes to the handler that was installed before
 * (a program's cleanup), then kills the process as it would without the
 * handler.  The handler is installed by sp_guard_init(), which only
 * sp_init() calls (init.h): the program asks for it, the library never
 * installs it unasked.  Until then nothing is mapped: sp_guard_run()
 * refuses, and the loads that would map read instead. */
#ifndef SP_GUARD_H
#define SP_GUARD_H

#include "status.h"

/* sp_guard_init: install the SIGBUS handler, once for the process (the
 * handler there before is kept, for the faults that are not a guarded
 * read's).  Thread-safe; later calls return the first one's status: 0 or
 * sigaction()'s errno value. */
sp_status sp_guard_init(void);

/* sp_guard_ready: whether the handler is installed (sp_guard_init()
 * succeeded): a load maps its input only then. */
int sp_guard_ready(void);

/* sp_guard_run: run FN(ARG) in this thread with SIGBUS turned into
 * SP_E_CHANGED.  FN must leave nothing allocated that a jump out of it
 * would leak.  Returns FN's status, SP_E_CHANGED, or ENOTSUP without
 * running FN when the handler is not installed. */
sp_status sp_guard_run(sp_status (*fn)(void *arg), void *arg);

#endif
