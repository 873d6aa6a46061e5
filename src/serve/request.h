/* request.h: what a request asks for (its query), and what HTTP makes
 * of the answer: the validator (ETag), the conditions that answer 304,
 * the media type.  Pure functions: the server (server.c) feeds them what
 * libmicrohttpd gives it. */
#ifndef SP_SERVE_REQUEST_H
#define SP_SERVE_REQUEST_H

#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "input_types.h"
#include "job_types.h"
#include "params.h"
#include "status.h"

/* What the query asks for: a job's keys (params.h), the command line's
 * long options by the same names, and the load path (io=) where the
 * server allows one.  The server's job is JOB, its input, output and
 * limits added (server.c). */
struct sp_serve_ask {
    struct sp_job job;        /* the keys' fields, as params.h sets them;
                                 FMT and PNM_TYPE as format= names them
                                 (sp_serve_ask_check) */
    struct sp_params params;  /* the keys given, and format='s extension
                                 (FORMAT: static, lower case; "pnm", the
                                 input's own type, by default) */
    char why[SP_PARAMS_WHY_MAX];  /* the last refusal's phrase */
};

/* SP_SERVE_PAIRS_MAX: the pairs a query may hold (past it, 431): more
 * than any request can use (each key once), and few enough that
 * libmicrohttpd's memory for a connection always holds them. */
#define SP_SERVE_PAIRS_MAX 64

/* sp_serve_query_pairs: the pairs of QUERY (what follows a URL's '?'),
 * as libmicrohttpd splits them: the '&' it holds, plus one; 0 for an
 * empty QUERY. */
size_t sp_serve_query_pairs(const char *query);

/* sp_serve_ask_init: ASK with no option given. */
void sp_serve_ask_init(struct sp_serve_ask *ask);

/* sp_serve_ask_set: the query's KEY=VALUE (as sent: no escape is
 * decoded, and a value holding one is refused, since no value taken here
 * needs one) into ASK, as sp_params_set reads it, each key once;
 * ALLOW_IO: io= is accepted.  Returns 0, or EINVAL with *WHY (ASK's)
 * the phrase saying what is wrong with the pair, for the caller to show
 * after it. */
sp_status sp_serve_ask_set(struct sp_serve_ask *ask, const char *key,
                           const char *value, int allow_io,
                           const char **why);

/* sp_serve_ask_check: what the keys ask together, as the command line
 * checks them (sp_params_check, and sp_params_suit against format=),
 * then the job's format and PNM type set from format=.  Returns 0, or
 * EINVAL with *WHY (ASK's). */
sp_status sp_serve_ask_check(struct sp_serve_ask *ask, const char **why);

/* sp_serve_media_type: the Content-Type of an output with extension EXT
 * (as ASK's format=). */
const char *sp_serve_media_type(const char *ext);

/* SP_ETAG_MAX: room for an ETag, its quotes and NUL. */
#define SP_ETAG_MAX 24

/* sp_serve_etag: a strong validator, quoted, into OUT (SP_ETAG_MAX): a
 * 64-bit hash of the file's identity as SB gives it (device, inode, size,
 * modification and change times to the nanosecond), of ASK's job in its
 * canonical form (sp_params_canonical: every key, so a key added to the
 * table is in the tag), and of VERSION (the program's: another version
 * may encode differently).  The same file and job give the same bytes
 * (scaleppm is deterministic), so the same tag means the same body. */
void sp_serve_etag(const struct stat *sb, const struct sp_serve_ask *ask,
                   const char *version, char *out);

/* SP_RACY_NS: how recent a file's modification may be, against the
 * moment it was opened, before its stamp no longer vouches for the bytes
 * read (git's "racily clean" entries): a write in progress set the stamp
 * when it began, so a reader may take rows of both versions under one
 * stamp.  Two seconds: the coarsest stamps kept (FAT's), beyond an HTTP
 * date's second, with the span of a write that began before the open. */
#define SP_RACY_NS 2000000000LL

/* sp_serve_racy: whether SB's modification time (a write sets it as the
 * write begins) is too recent against OPENED, the real-time clock read
 * before the file was opened, to validate what was read of it: within
 * SP_RACY_NS of OPENED, or after it. */
int sp_serve_racy(const struct stat *sb, const struct timespec *opened);

/* sp_serve_not_modified: whether a request with If-None-Match INM and
 * If-Modified-Since IMS (either NULL when absent) is answered 304 at
 * time NOW for a body tagged ETAG from a file last modified at MTIME:
 * INM lists ETAG (weak comparison, as RFC 9110 asks for If-None-Match)
 * or is "*"; else, with no INM, IMS is a valid HTTP date not before
 * MTIME's second and not after NOW (RFC 9110 13.1.3: a date later than
 * the server's clock is ignored, as one that does not parse is). */
int sp_serve_not_modified(const char *inm, const char *ims, const char *etag,
                          time_t mtime, time_t now);

/* sp_serve_http_date: T as an HTTP date (IMF-fixdate) into OUT (32
 * bytes). */
void sp_serve_http_date(time_t t, char *out);

#endif
