/* accesslog.h: the server's access log, a line a request: on a stream
 * of the caller's (standard error), or appended to a file that
 * sp_accesslog_reopen() opens anew, so that a log rotated by renaming
 * goes on at its old name (SIGUSR1, as nginx's).  Its calls may come
 * from any thread. */
#ifndef SP_SERVE_ACCESSLOG_H
#define SP_SERVE_ACCESSLOG_H

#include <pthread.h>
#include <stdio.h>

#include "status.h"

struct sp_accesslog {
    pthread_mutex_t mu;
    FILE *f;           /* where the lines go; NULL: nowhere */
    const char *path;  /* the file F was opened from; NULL: F is the
                          caller's stream */
};

/* sp_accesslog_open: LOG writing to the file PATH (created, appended
 * to), or, with PATH NULL, to STREAM (NULL: no log).  Returns 0, or an
 * errno value with LOG untouched. */
sp_status sp_accesslog_open(struct sp_accesslog *log, const char *path,
                            FILE *stream);

/* sp_accesslog_line: one line, FMT and its arguments (with its newline),
 * written whole before any other thread's. */
__attribute__((format(printf, 2, 3)))
void sp_accesslog_line(struct sp_accesslog *log, const char *fmt, ...);

/* sp_accesslog_reopen: LOG's file opened again by its path, the lines
 * going there from the next; the old one closed.  Nothing for a stream.
 * Returns 0, or an errno value with the old file kept. */
sp_status sp_accesslog_reopen(struct sp_accesslog *log);

/* sp_accesslog_close: LOG's file closed (a stream is the caller's). */
void sp_accesslog_close(struct sp_accesslog *log);

#endif
