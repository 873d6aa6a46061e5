/* init.h: sp_init, the one call that sets up what the library needs of
 * the process, made when the program asks and never behind its back.
 *
 * Two things in the library are the process's, not a job's: the SIGBUS
 * handler that turns a fault in a mapped input into an error (guard.h),
 * and libnetpbm's program name and error hooks (header.h).  A program
 * (the command line, the batch, the server, a test) calls sp_init() once
 * before its first job, as SQLite's programs call sqlite3_initialize();
 * a host that does not own its signals or libnetpbm's hooks can leave it
 * uncalled, and then gets no surprise: no mapping (a mapped load reads
 * instead, and its report says read), and every PNM header, read or
 * written, refused with a WHY that names sp_init(); JPEG and PNG inputs,
 * and JPEG, PNG, BMP and TGA outputs, work as they do after it. */
#ifndef SP_INIT_H
#define SP_INIT_H

#include "status.h"

/* sp_lib_init: install the SIGBUS handler (the one there before kept for
 * the faults that are not a mapped read's) and set up libnetpbm, once for
 * the process: the public sp_init() (scaleppm.h), which returns its
 * status negated.  Idempotent and thread-safe (pthread_once): later calls return
 * the first one's status.  Returns 0, or sigaction()'s errno value (then
 * libnetpbm is set up, and nothing is mapped). */
sp_status sp_lib_init(void);

#endif
