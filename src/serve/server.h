/* server.h: `scaleppm serve`'s HTTP server (docs/serve.md): libmicrohttpd
 * answering GET and HEAD for the files beneath a root, each request a job
 * run by a worker of a bounded pool (pool.h).  The only file that speaks
 * to libmicrohttpd. */
#ifndef SP_SERVE_SERVER_H
#define SP_SERVE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* What the server is asked to do (the options of scaleppm serve). */
struct sp_serve_config {
    const char *root;        /* the directory served */
    const char *host;        /* the IPv4 address to listen on */
    unsigned port;           /* 0: one the kernel picks */
    const char *unix_path;   /* a Unix socket to listen on instead of
                                HOST:PORT, removed at the stop; NULL */
    unsigned workers;        /* jobs at once */
    size_t queue;            /* requests waiting for a worker at most */
    unsigned threads;        /* each job's threads */
    uint64_t max_pixels;     /* a job's limit; 0: the job's default */
    uint64_t max_memory;     /* the bytes the jobs admitted and the
                                answers not yet sent may hold together
                                (budget.h); 0: no limit */
    uint64_t max_output;     /* an answer's planned bytes (sp_serve_body)
                                at most, else 413; 0: no limit */
    int allow_io;            /* io= is taken from the query */
    unsigned max_connections;  /* connections at once (libmicrohttpd's
                                  limit: past it, the kernel's backlog) */
    unsigned max_per_client;   /* requests in flight from one address,
                                  else 429 (clients.h); 0: no limit */
    unsigned idle_timeout;   /* seconds a connection may sit idle */
    double header_timeout;   /* seconds a connection has for a request's
                                header, from its accept or its last
                                answer, else it is closed; 0: no limit */
    double deadline;         /* seconds a request may take from its
                                headers to its job's end, queue included,
                                else 503; 0: no limit */
    const char *version;     /* in every ETag */
    struct sp_accesslog *log;  /* the access log: a line a request;
                                  NULL: none */
};

struct sp_accesslog;
struct sp_server;

/* sp_server_start: the server CFG asks for, listening and answering on
 * its own threads.  *PORT gets the port it listens on.  Returns 0 with
 * *SRV the caller's to stop, or an errno value with WHY (SP_WHY_MAX)
 * saying what failed; nothing is left running. */
sp_status sp_server_start(const struct sp_serve_config *cfg,
                          struct sp_server **srv, unsigned *port, char *why);

/* sp_server_stop: stop accepting connections, let the requests in
 * flight finish for up to DRAIN seconds (their jobs always finish), then
 * close every connection, end the threads, and free SRV. */
void sp_server_stop(struct sp_server *srv, unsigned drain);

#endif
