/* The HTTP server: libmicrohttpd's handler, a request's life from its
 * path to its answer, the jobs on the pool (server.h, docs/serve.md). */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "accesslog.h"
#include "budget.h"
#include "clients.h"
#include "deadline.h"
#include "decode.h"
#include "input.h"
#include "job.h"
#include "metrics.h"
#include "outfmt.h"
#include "msg.h"
#include "path.h"
#include "pool.h"
#include "request.h"
#include "timing.h"

/* The stack of a worker: a job's frames and libnetpbm's beneath them, as
 * the command line gives its job (cli/main.c). */
#define WORKER_STACK (1024 * 1024)

/* Retry-After on a 503: the queue drains in about a job's time. */
#define RETRY_AFTER "1"

struct sp_server {
    struct sp_serve_config cfg;
    struct MHD_Daemon *daemon;
    struct sp_pool pool;
    int root;                   /* O_PATH descriptor of the root */
    int listen_fd;
    int have_socket;            /* cfg.unix_path was made */
    atomic_int active;          /* requests begun and not completed */
    atomic_int draining;
    struct sp_metrics metrics;
    struct sp_watch *watch;     /* the jobs' deadlines and the headers';
                                   NULL: neither */
    struct sp_budget budget;    /* --max-memory */
    struct sp_clients clients;  /* --max-per-client */
};

/* A connection, libmicrohttpd's socket context: its socket, and its
 * place in SRV->watch while a request's header is due (from its accept
 * or its last answer until the header is whole), so that a client
 * sending a byte now and then, which would reset --timeout at each,
 * cannot hold it past --header-timeout.  Touched on libmicrohttpd's
 * polling thread only. */
struct conn {
    int fd;
    int slot;                   /* in SRV->watch; -1: not watched */
};

/* A request's progress: answered from the handler at once, or waiting
 * for its job (suspended), then its job's answer. */
enum { REQ_NEW, REQ_WAITING, REQ_DONE };

struct req {
    struct sp_server *srv;
    struct MHD_Connection *conn;
    atomic_int state;
    int begun;                  /* begin() called */
    char method[16];            /* the request's, as the log shows it:
                                   libmicrohttpd's copy may be gone by
                                   completed() */
    struct sp_serve_ask ask;
    int in_fd;                  /* -1 when not open */
    struct stat sb;             /* the input's, at open */
    int racy;                   /* SB changed too near the open to vouch
                                   for the bytes (sp_serve_racy): no
                                   validator, no 304 */
    unsigned char *out;         /* the job's output (a memory target),
                                   then the response's; NULL: none */
    size_t out_len;
    char etag[SP_ETAG_MAX];
    char modified[32];
    char timing[160];           /* Server-Timing: the job's phases */
    sp_status st;               /* the job's */
    char why[SP_WHY_MAX];       /* the job's detail, for the log */
    unsigned status;            /* the status answered */
    uint64_t bytes;             /* the body's bytes */
    struct timespec start;
    uint64_t deadline;          /* sp_now_ns() past which the request
                                   is abandoned; 0: never */
    struct sp_cancel cancel;    /* set by SRV->watch at the deadline */
    uint64_t body;              /* the answer's planned bytes
                                   (sp_serve_body) */
    uint64_t cost;              /* the bytes taken from SRV->budget: the
                                   job's and BODY, then the answer's */
    int charged;                /* COST is taken, not yet given back */
    int over_budget;            /* refused by the budget: ST says why */
    int over_output;            /* an answer over --max-output */
    struct sp_client_key client;  /* the client's address */
    int keyed;                  /* CLIENT is an address (not a Unix
                                   socket's peer) */
    int entered;                /* counted in SRV->clients */
    int query_cut;              /* more pairs than SP_SERVE_PAIRS_MAX:
                                   its query emptied (uri_seen), 431 */
    char shown[512];            /* the URL as the log shows it */
};

/* answer: RESP queued on R's connection with STATUS (RESP destroyed). */
static enum MHD_Result answer(struct req *r, unsigned status,
                              struct MHD_Response *resp, uint64_t bytes)
{
    enum MHD_Result ok;

    if (resp == NULL)
        return MHD_NO;
    if (atomic_load(&r->srv->draining))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    r->status = status;
    r->bytes = strcmp(r->method, MHD_HTTP_METHOD_HEAD) == 0 ? 0 : bytes;
    ok = MHD_queue_response(r->conn, status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* answer_text: STATUS with the one-line body TEXT and a newline. */
static enum MHD_Result answer_text(struct req *r, unsigned status,
                                   const char *text)
{
    char body[320];
    int n = snprintf(body, sizeof body, "%s\n", text);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof body ? (size_t)n
                                                     : sizeof body - 1;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_COPY);

    if (resp == NULL)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "text/plain; charset=utf-8");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE ||
        status == MHD_HTTP_TOO_MANY_REQUESTS)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER,
                                RETRY_AFTER);
    return answer(r, status, resp, len);
}

/* answer_metrics: /metrics, the Prometheus text of SRV's counters. */
static enum MHD_Result answer_metrics(struct req *r)
{
    struct sp_server *srv = r->srv;
    struct MHD_Response *resp;
    size_t len = 8192, n, queued;
    unsigned busy;
    char *text;

    sp_pool_load(&srv->pool, &busy, &queued);
    for (;;) {
        if ((text = malloc(len)) == NULL)
            return MHD_NO;
        n = sp_metrics_render(&srv->metrics,
                              (unsigned)atomic_load(&srv->active), busy,
                              queued, sp_budget_used(&srv->budget), text,
                              len);
        if (n < len)
            break;
        free(text);
        len = n + 1;
    }
    resp = MHD_create_response_from_buffer(n, text, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "text/plain; version=0.0.4");
    return answer(r, MHD_HTTP_OK, resp, n);
}

/* answer_errno: the status an errno value from opening or decoding the
 * path says, with its one line. */
static enum MHD_Result answer_errno(struct req *r, sp_status st)
{
    switch (st) {
    case ENOENT:
    case ENOTDIR:
        return answer_text(r, MHD_HTTP_NOT_FOUND, "404 not found");
    case ENAMETOOLONG:
        return answer_text(r, MHD_HTTP_URI_TOO_LONG, "414 path too long");
    case EXDEV:
    case ELOOP:
    case EISDIR:
    case EINVAL:
    case EACCES:
    case EPERM:
        return answer_text(r, MHD_HTTP_FORBIDDEN, "403 forbidden");
    default:
        return answer_text(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                           "500 cannot open the file");
    }
}

/* add_validators: the headers that let a client cache R's answer, or,
 * for a file changed too near its open (its bytes may be torn), that it
 * must not keep it. */
static void add_validators(struct req *r, struct MHD_Response *resp)
{
    if (r->racy) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                                "no-store");
        return;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, r->etag);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_LAST_MODIFIED,
                            r->modified);
    /* Revalidate each time: a 304 costs a stat, never a decode. */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
}

static enum MHD_Result answer_not_modified(struct req *r)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);

    if (resp == NULL)
        return MHD_NO;
    add_validators(r, resp);
    return answer(r, MHD_HTTP_NOT_MODIFIED, resp, 0);
}

/* answer_job: R's job done: its output, or the status its failure says. */
static enum MHD_Result answer_job(struct req *r)
{
    struct MHD_Response *resp;
    char line[SP_WHY_MAX + 64], shown[SP_WHY_MAX];

    if (r->over_output)
        return answer_text(r, MHD_HTTP_CONTENT_TOO_LARGE,
                           "413 output larger than --max-output");
    if (r->over_budget)
        return r->st == EFBIG
                   ? answer_text(r, MHD_HTTP_CONTENT_TOO_LARGE,
                                 "413 more memory than --max-memory")
                   : answer_text(r, MHD_HTTP_SERVICE_UNAVAILABLE,
                                 "503 busy: memory; try again");
    switch (r->st) {
    case SP_OK:
        break;
    case EAGAIN:
    case ESHUTDOWN:
        return answer_text(r, MHD_HTTP_SERVICE_UNAVAILABLE,
                           "503 busy: try again");
    case ETIMEDOUT:
        return answer_text(r, MHD_HTTP_SERVICE_UNAVAILABLE,
                           "503 the request's deadline passed");

    case SP_E_LIMIT:
    case SP_E_TOOBIG:
        snprintf(line, sizeof line, "413 image too large: %s",
                 sp_strerror(r->st));
        return answer_text(r, MHD_HTTP_CONTENT_TOO_LARGE, line);
    case SP_E_EMPTY:
    case SP_E_NOTPNM:
    case SP_E_UNSUPPORTED:
        snprintf(line, sizeof line, "415 %s: %s", sp_strerror(r->st),
                 r->why[0] != '\0'
                     ? sp_show_name(r->why, shown, sizeof shown)
                     : "the file");
        return answer_text(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, line);
    case SP_E_CONVERT:
    case SP_E_OUTFORMAT:
        snprintf(line, sizeof line, "400 bad request: %s",
                 sp_strerror(r->st));
        return answer_text(r, MHD_HTTP_BAD_REQUEST, line);
    default:
        snprintf(line, sizeof line, "500 cannot scale the file: %s",
                 sp_strerror(r->st));
        return answer_text(r, MHD_HTTP_INTERNAL_SERVER_ERROR, line);
    }
    resp = MHD_create_response_from_buffer_with_free_callback(r->out_len,
                                                              r->out, free);
    if (resp == NULL)
        return MHD_NO;
    r->out = NULL;  /* the response's now */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            sp_serve_media_type(r->ask.params.format));
    if (r->timing[0] != '\0')
        MHD_add_response_header(resp, "Server-Timing", r->timing);
    add_validators(r, resp);
    return answer(r, MHD_HTTP_OK, resp, (uint64_t)r->out_len);
}

/* same_stamp: whether A and B are one version of one file. */
static int same_stamp(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
           a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
           a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* record_job: what REPORT measured of R's job: its page faults in the
 * metrics, its phases in R's Server-Timing header. */
static void record_job(struct req *r, const struct sp_report *report)
{
    static const char *const names[SP_NPHASES] = {"load", "scale",
                                                  "release", "write"};
    long minflt = 0, majflt = 0;
    size_t at = 0;

    if (report->images == 0)
        return;  /* it failed before it loaded a thing */
    for (int p = 0; p < SP_NPHASES; p++) {
        int n = snprintf(r->timing + at, sizeof r->timing - at,
                         "%s%s;dur=%.3f", p ? ", " : "", names[p],
                         (double)report->phase[p].ns / 1e6);

        minflt += report->phase[p].minflt;
        majflt += report->phase[p].majflt;
        if (n > 0 && (size_t)n < sizeof r->timing - at)
            at += (size_t)n;
    }
    sp_metrics_job(&r->srv->metrics, (int)report->load.io_used, minflt,
                   majflt);
}

/* peek_accept: an sp_accept_fn that keeps the header (ARG) and stops the
 * load before a raster byte. */
static sp_status peek_accept(struct sp_header *hdr, void *arg,
                             char *why)
{
    (void)why;
    *(struct sp_header *)arg = *hdr;
    return ECANCELED;
}

/* job_cost: the bytes R's job would hold (budget.h) and R->body, from
 * its header, read through R's descriptor and no further.  Returns 0, or
 * the status the job's load would fail with, its detail in R->why. */
static sp_status job_cost(struct req *r, uint64_t *cost)
{
    struct sp_input input;
    struct sp_header hdr;
    struct sp_load_info info;
    struct sp_src in = sp_src_fd(r->in_fd);
    int held, stb, turn;
    sp_status st;

    if ((st = sp_input_open(&input, &in, 1, NULL)) != SP_OK)
        return st;
    memset(&hdr, 0, sizeof hdr);
    memset(&info, 0, sizeof info);
    st = sp_input_next(&input, r->ask.job.io, peek_accept, &hdr, &info);
    sp_input_close(&input);
    if (st != ECANCELED) {
        snprintf(r->why, sizeof r->why, "%s", info.why);
        return st == SP_OK ? EIO : st;
    }
    /* a codec that holds its raster whole (JPEG, PNG) decodes it into
     * memory, as the read path and a plain PNM do */
    held = r->ask.job.io == SP_IO_READ || hdr.plain || info.codec == NULL ||
           info.codec->whole;
    /* a format that takes the whole image (BMP, TGA) has it built whole
     * in memory */
    stb = !sp_output_is_streamed(r->ask.job.fmt);
    /* A picture turned upright (header.h's orient) is scaled with its
     * sides as a viewer shows them, and is held twice while it turns:
     * the raster decoded and the raster upright. */
    turn = !r->ask.job.no_orient && hdr.orientation > 1 &&
           hdr.orientation <= 8;
    if (turn && hdr.orientation >= 5) {
        size_t w = hdr.width;

        hdr.width = hdr.height;
        hdr.height = w;
    }
    *cost = sp_serve_cost(&hdr, r->ask.job.factor, &r->ask.job.fit, held,
                          stb, r->srv->cfg.threads);
    if (turn && *cost <= UINT64_MAX - hdr.raster_bytes)
        *cost += hdr.raster_bytes;
    r->body = sp_serve_body(&hdr, r->ask.job.factor, &r->ask.job.fit);
    return SP_OK;
}

/* admit: R's answer planned from its header, and its job's bytes and
 * its answer's taken from the budget (--max-memory), on R's worker: the
 * header is read there, not on libmicrohttpd's polling thread, which a
 * cold file would block.  Returns 0 when admitted; EFBIG with
 * R->over_output set when the answer would be over --max-output (413);
 * EFBIG when the bytes are more than the whole budget (413) or EAGAIN
 * while the others hold too much of it (503), with R->over_budget set;
 * or the status its header's load fails with. */
static sp_status admit(struct req *r)
{
    uint64_t job, max_output = r->srv->cfg.max_output;
    sp_status st = job_cost(r, &job);

    if (st != SP_OK)
        return st;
    if (max_output > 0 && r->body > max_output) {
        r->over_output = 1;
        return EFBIG;
    }
    r->cost = job > UINT64_MAX - r->body ? UINT64_MAX : job + r->body;
    st = sp_budget_take(&r->srv->budget, r->cost);
    r->charged = st == SP_OK;
    r->over_budget = st != SP_OK;
    return st;
}

/* may_begin: whether R's job may begin on the worker that took it: not
 * when its deadline passed in the queue (ETIMEDOUT), nor when its answer
 * or the budget does not admit it (admit()). */
static sp_status may_begin(struct req *r)
{
    const struct sp_serve_config *cfg = &r->srv->cfg;

    if (r->deadline != 0 && sp_now_ns() >= r->deadline)
        return ETIMEDOUT;
    return cfg->max_memory > 0 || cfg->max_output > 0 ? admit(r) : SP_OK;
}

/* keep_body: R's charge made the bytes of its answer, which it holds
 * until its response is freed (completed()): the job's given back, or
 * what the answer holds past its plan taken.  Returns 0; or EFBIG with
 * R->over_output set for an answer over --max-output, or the budget's
 * refusal with R->over_budget set, R's output closed. */
static sp_status keep_body(struct req *r)
{
    struct sp_budget *b = &r->srv->budget;
    uint64_t len = (uint64_t)r->out_len, max_output = r->srv->cfg.max_output;
    sp_status st = SP_OK;

    if (max_output > 0 && len > max_output) {
        r->over_output = 1;
        st = EFBIG;
    } else if (r->charged && len <= r->cost) {
        sp_budget_give(b, r->cost - len);
        r->cost = len;
    } else if (r->charged) {
        st = sp_budget_take(b, len - r->cost);
        r->over_budget = st != SP_OK;
        if (st == SP_OK)
            r->cost = len;
    }
    if (st != SP_OK) {
        free(r->out);
        r->out = NULL;
    }
    return st;
}

/* run_job: R's job, on a worker: the input the confinement opened, read
 * through its descriptor, into memory (R->out), in the format the query
 * asks for. */
static void run_job(struct req *r)
{
    struct sp_server *srv = r->srv;
    struct sp_report report;
    struct stat after;
    struct sp_job job = r->ask.job;
    int slot = -1;

    job.in = sp_src_fd(r->in_fd);
    job.out = sp_target_memory(&r->out, &r->out_len);
    job.threads = srv->cfg.threads;
    job.max_pixels = srv->cfg.max_pixels;
    job.open_nowait = 1;

    if ((r->st = may_begin(r)) != SP_OK) {
        close(r->in_fd);
        r->in_fd = -1;
        return;
    }
    if (r->deadline != 0) {
        job.cancel = &r->cancel;
        slot = sp_watch_enter(srv->watch, &r->cancel, r->deadline);
    }
    r->st = sp_job_exec(&job, &report);
    if (slot >= 0)
        sp_watch_leave(srv->watch, slot);
    if (r->st == EINTR && sp_cancelled(&r->cancel))
        r->st = ETIMEDOUT;
    record_job(r, &report);
    if (r->st != SP_OK)
        snprintf(r->why, sizeof r->why, "%s", report.why);
    /* The tag was made from the file at open: the bytes must be that
     * version's, or the tag would name another body. */
    if (r->st == SP_OK &&
        (fstat(r->in_fd, &after) != 0 || !same_stamp(&after, &r->sb)))
        r->st = SP_E_CHANGED;
    if (r->st == SP_OK)
        r->st = keep_body(r);
    if (r->st != SP_OK) {
        free(r->out);
        r->out = NULL;
    }
    close(r->in_fd);
    r->in_fd = -1;
}

/* uncharge: R's bytes given back to the budget, once. */
static void uncharge(struct req *r)
{
    if (r->charged)
        sp_budget_give(&r->srv->budget, r->cost);
    r->charged = 0;
}

/* work: a worker's task: R's job, then R's connection resumed to answer
 * it.  An answer's bytes stay charged until its response is freed. */
static void work(void *task)
{
    struct req *r = task;

    run_job(r);
    if (r->st != SP_OK)
        uncharge(r);
    atomic_store(&r->state, REQ_DONE);
    MHD_resume_connection(r->conn);
}

struct query {
    struct req *r;
    const char *why;
    char pair[96];  /* the KEY=VALUE refused, as the answer shows it */
};

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind,
                                 const char *key, const char *value)
{
    struct query *q = cls;
    const char *why;

    (void)kind;
    if (sp_serve_ask_set(&q->r->ask, key, value, q->r->srv->cfg.allow_io,
                         &why) != SP_OK) {
        char raw[sizeof q->pair];

        snprintf(raw, sizeof raw, "%s%s%s", key, value != NULL ? "=" : "",
                 value != NULL ? value : "");
        sp_show_name(raw, q->pair, sizeof q->pair);
        q->why = why;
        return MHD_NO;
    }
    return MHD_YES;
}

/* submit: R to the pool, its connection suspended until its job is
 * done; a full queue is answered 503 at once. */
static enum MHD_Result submit(struct req *r)
{
    sp_status st;

    atomic_store(&r->state, REQ_WAITING);
    MHD_suspend_connection(r->conn);
    st = sp_pool_submit(&r->srv->pool, r);
    if (st != SP_OK) {
        r->st = st;
        close(r->in_fd);
        r->in_fd = -1;
        uncharge(r);
        atomic_store(&r->state, REQ_DONE);
        MHD_resume_connection(r->conn);
    }
    return MHD_YES;
}

/* begin: R's first call: everything answered without a job (the
 * health check, refusals, 304), else its job submitted. */
static enum MHD_Result begin(struct req *r, const char *url)
{
    struct sp_server *srv = r->srv;
    char rel[PATH_MAX];
    const char *why;
    struct query q = {r, NULL, ""};
    struct timespec opened;
    sp_status st;

    if (strcmp(r->method, MHD_HTTP_METHOD_GET) != 0 &&
        strcmp(r->method, MHD_HTTP_METHOD_HEAD) != 0)
        return answer_text(r, MHD_HTTP_METHOD_NOT_ALLOWED,
                           "405 method not allowed: GET or HEAD");
    if (r->query_cut) {
        char line[64];

        snprintf(line, sizeof line, "431 a query of more than %d pairs",
                 SP_SERVE_PAIRS_MAX);
        return answer_text(r, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
                           line);
    }
    if (strcmp(url, "/healthz") == 0)
        return answer_text(r, MHD_HTTP_OK, "ok");
    if (strcmp(url, "/metrics") == 0)
        return answer_metrics(r);
    if (strcmp(url, "/readyz") == 0)
        return atomic_load(&srv->draining)
                   ? answer_text(r, MHD_HTTP_SERVICE_UNAVAILABLE,
                                 "503 draining")
                   : answer_text(r, MHD_HTTP_OK, "ready");
    /* A draining server still reads new connections, so that /readyz
     * says so; their other requests go elsewhere. */
    if (atomic_load(&srv->draining))
        return answer_text(r, MHD_HTTP_SERVICE_UNAVAILABLE,
                           "503 draining: try another server");
    /* Past here a request may take a worker: the client's cap counts. */
    if (r->keyed && sp_clients_enter(&srv->clients, &r->client) != SP_OK)
        return answer_text(r, MHD_HTTP_TOO_MANY_REQUESTS,
                           "429 too many requests from this client at once");
    r->entered = r->keyed;
    st = sp_serve_path_decode(url, rel, sizeof rel, &why);
    if (st == ENAMETOOLONG)
        return answer_text(r, MHD_HTTP_URI_TOO_LONG, "414 path too long");
    if (st != SP_OK) {
        char line[128];

        snprintf(line, sizeof line, "400 bad path: %s", why);
        return answer_text(r, MHD_HTTP_BAD_REQUEST, line);
    }
    sp_serve_ask_init(&r->ask);
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_arg, &q);
    if (q.why == NULL && sp_serve_ask_check(&r->ask, &why) != SP_OK)
        q.why = why;
    if (q.why != NULL) {
        char line[256];

        snprintf(line, sizeof line, "400 bad query: %s%s%s", q.pair,
                 q.pair[0] != '\0' ? ": " : "", q.why);
        return answer_text(r, MHD_HTTP_BAD_REQUEST, line);
    }
    clock_gettime(CLOCK_REALTIME, &opened);
    st = sp_serve_open(srv->root, rel, &r->in_fd, &r->sb);
    if (st != SP_OK)
        return answer_errno(r, st);
    r->racy = sp_serve_racy(&r->sb, &opened);
    if (r->racy)
        return submit(r);
    sp_serve_etag(&r->sb, &r->ask, srv->cfg.version, r->etag);
    sp_serve_http_date(r->sb.st_mtim.tv_sec, r->modified);
    if (sp_serve_not_modified(
            MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                        MHD_HTTP_HEADER_IF_NONE_MATCH),
            MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                        MHD_HTTP_HEADER_IF_MODIFIED_SINCE),
            r->etag, r->sb.st_mtim.tv_sec, time(NULL))) {
        close(r->in_fd);
        r->in_fd = -1;
        return answer_not_modified(r);
    }
    return submit(r);
}

/* conn_of: the struct conn of CONN (NULL: none was made). */
static struct conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return info != NULL ? info->socket_context : NULL;
}

/* await_header: C's next request's header due within --header-timeout,
 * else its socket shut down by the watch. */
static void await_header(struct sp_server *srv, struct conn *c)
{
    if (c == NULL || srv->cfg.header_timeout <= 0)
        return;
    sp_watch_leave(srv->watch, c->slot);
    c->slot = sp_watch_enter_socket(
        srv->watch, c->fd,
        sp_now_ns() + (uint64_t)(srv->cfg.header_timeout * 1e9));
}

/* header_read: C's request's header is whole: no deadline until its
 * answer is sent. */
static void header_read(struct sp_server *srv, struct conn *c)
{
    if (c == NULL || c->slot < 0)
        return;
    sp_watch_leave(srv->watch, c->slot);
    c->slot = -1;
}

/* connection_event: libmicrohttpd's connection notifier: a struct conn
 * for each connection accepted, its header due; forgotten before the
 * library closes the socket, so that the watch never shuts down a
 * descriptor number used again. */
static void connection_event(void *cls, struct MHD_Connection *conn,
                             void **socket_context,
                             enum MHD_ConnectionNotificationCode toe)
{
    struct sp_server *srv = cls;
    struct conn *c = *socket_context;
    const union MHD_ConnectionInfo *info;

    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        header_read(srv, c);
        free(c);
        *socket_context = NULL;
        return;
    }
    info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL || (c = malloc(sizeof *c)) == NULL)
        return;  /* not watched: --timeout alone bounds it */
    c->fd = info->connect_fd;
    c->slot = -1;
    *socket_context = c;
    await_header(srv, c);
}

/* identify: the address CONN's client connects from, into *KEY: 1, or
 * 0 when it has none to count (a Unix socket's peer). */
static int identify(struct MHD_Connection *conn, struct sp_client_key *key)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(
        conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

    return sp_client_key(info != NULL ? info->client_addr : NULL, key);
}

/* The mark of a request whose query uri_seen() emptied: its *con_cls
 * until the handler's first call. */
static char query_cut;

/* uri_seen: libmicrohttpd's URI log callback, called with URI in the
 * request line it read, before it splits the query.  libmicrohttpd
 * 0.9.75 splits the query into the connection's memory, and when the
 * pairs overflow it queues a 431 that it then loses: the connection
 * hangs until its timeout.  A query of more pairs than any request can
 * use is therefore emptied where it lies (its first byte, after the '?'
 * that the library found already, made the end), so that the library
 * splits nothing, and the handler answers 431. */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *conn)
{
    char *query = strchr(uri, '?');

    (void)cls;
    (void)conn;
    if (query == NULL || sp_serve_query_pairs(query + 1) <= SP_SERVE_PAIRS_MAX)
        return NULL;
    query[1] = '\0';
    return &query_cut;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    struct sp_server *srv = cls;
    struct req *r = *con_cls;

    (void)version;
    (void)upload;
    if (r == NULL || *con_cls == &query_cut) {
        r = calloc(1, sizeof *r);
        if (r == NULL)
            return MHD_NO;
        r->query_cut = *con_cls == &query_cut;
        header_read(srv, conn_of(conn));
        clock_gettime(CLOCK_MONOTONIC, &r->start);
        if (srv->cfg.deadline > 0)
            r->deadline = sp_now_ns() + (uint64_t)(srv->cfg.deadline * 1e9);
        r->srv = srv;
        r->conn = conn;
        r->keyed = identify(conn, &r->client);
        sp_show_name(method, r->method, sizeof r->method);
        r->in_fd = -1;
        atomic_init(&r->state, REQ_NEW);
        sp_show_name(url, r->shown, sizeof r->shown);
        atomic_fetch_add(&srv->active, 1);
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size != 0) {
        *upload_size = 0;  /* a body is not wanted: dropped */
        return MHD_YES;
    }
    /* Answered once the request is read whole, body and all: a response
     * queued before would cost the connection its keep-alive. */
    if (!r->begun) {
        r->begun = 1;
        return begin(r, url);
    }
    if (atomic_load(&r->state) == REQ_DONE && r->status == 0)
        return answer_job(r);
    return MHD_YES;
}

/* completed: R's connection is done with it: the next request's header
 * due from now, the access log's line, then R freed. */
static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode why)
{
    struct sp_server *srv = cls;
    struct req *r = *con_cls;
    struct timespec now;
    double seconds;

    await_header(srv, conn_of(conn));
    if (r == NULL || *con_cls == &query_cut)
        return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    seconds = (double)(now.tv_sec - r->start.tv_sec) +
              (double)(now.tv_nsec - r->start.tv_nsec) / 1e9;
    sp_metrics_record(&srv->metrics, r->status, r->bytes, seconds);
    if (srv->cfg.log != NULL)
        sp_accesslog_line(srv->cfg.log, "%s %s %u %llu %.3f ms%s\n",
                          r->method, r->shown, r->status,
                          (unsigned long long)r->bytes, seconds * 1e3,
                          why == MHD_REQUEST_TERMINATED_COMPLETED_OK
                              ? ""
                              : " (cut)");
    if (r->in_fd >= 0)
        close(r->in_fd);
    free(r->out);
    uncharge(r);
    if (r->entered)
        sp_clients_leave(&srv->clients, &r->client);
    free(r);
    *con_cls = NULL;
    atomic_fetch_sub(&srv->active, 1);
}

/* as_sent: libmicrohttpd's unescaping replaced by none: the handler
 * decodes the path itself, once (path.h). */
static size_t as_sent(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    (void)conn;
    return strlen(s);
}

/* address_of: HOST, an IPv4 or IPv6 address, with PORT into SA and
 * *LEN: 0 or -1. */
static int address_of(const char *host, unsigned port,
                      struct sockaddr_storage *sa, socklen_t *len)
{
    struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;

    memset(sa, 0, sizeof *sa);
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *len = sizeof *v4;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *len = sizeof *v6;
        return 0;
    }
    return -1;
}

/* listen_on: a listening TCP socket on HOST (IPv4 or IPv6) and *PORT
 * into *FD, *PORT set to the port bound.  An IPv6 socket takes IPv6
 * only, so that [::] never answers on IPv4 addresses unasked. */
static sp_status listen_on(const char *host, unsigned *port, int *fd,
                           char *why)
{
    struct sockaddr_storage sa;
    socklen_t len;
    int one = 1, s;
    sp_status st;

    if (address_of(host, *port, &sa, &len) != 0) {
        snprintf(why, SP_WHY_MAX, "'%s' is not an IPv4 or IPv6 address",
                 host);
        return EINVAL;
    }
    s = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return errno;
    (void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (sa.ss_family == AF_INET6)
        (void)setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&sa, len) != 0 ||
        listen(s, SOMAXCONN) != 0 ||
        getsockname(s, (struct sockaddr *)&sa, &len) != 0) {
        st = errno;
        snprintf(why, SP_WHY_MAX, "cannot listen on %s port %u", host,
                 *port);
        close(s);
        return st;
    }
    *port = ntohs(sa.ss_family == AF_INET
                      ? ((struct sockaddr_in *)&sa)->sin_port
                      : ((struct sockaddr_in6 *)&sa)->sin6_port);
    *fd = s;
    return SP_OK;
}

/* listen_unix: a listening Unix socket at PATH into *FD.  A socket left
 * there by a server that died is replaced; any other file is not. */
static sp_status listen_unix(const char *path, int *fd, char *why)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct stat sb;
    sp_status st;
    int s;

    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(why, SP_WHY_MAX, "a socket path too long");
        return ENAMETOOLONG;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (lstat(path, &sb) == 0 && S_ISSOCK(sb.st_mode))
        (void)unlink(path);
    s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return errno;
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(s, SOMAXCONN) != 0) {
        st = errno;
        snprintf(why, SP_WHY_MAX, "cannot listen on unix:%.200s", path);
        close(s);
        return st;
    }
    *fd = s;
    return SP_OK;
}

/* prepare: SRV's root and socket. */
static sp_status prepare(struct sp_server *srv, unsigned *port, char *why)
{
    sp_status st;

    srv->root = open(srv->cfg.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (srv->root < 0) {
        st = errno;
        snprintf(why, SP_WHY_MAX, "--root '%.200s'", srv->cfg.root);
        return st;
    }
    *port = srv->cfg.port;
    if (srv->cfg.unix_path != NULL) {
        st = listen_unix(srv->cfg.unix_path, &srv->listen_fd, why);
        srv->have_socket = st == SP_OK;
        return st;
    }
    return listen_on(srv->cfg.host, port, &srv->listen_fd, why);
}

/* teardown: what prepare() made, as far as it got, and the watch. */
static void teardown(struct sp_server *srv)
{
    if (srv->watch != NULL)
        sp_watch_stop(srv->watch);
    if (srv->listen_fd >= 0)
        close(srv->listen_fd);
    if (srv->have_socket)
        (void)unlink(srv->cfg.unix_path);
    if (srv->root >= 0)
        close(srv->root);
    sp_budget_destroy(&srv->budget);
    sp_clients_destroy(&srv->clients);
    free(srv);
}

/* watch_tick: how often the watch looks, for a job's deadline of
 * SECONDS and a header's of HEADER (0: none): a tenth of the shorter,
 * from a millisecond to a tenth of a second. */
static unsigned watch_tick(double seconds, double header)
{
    double shorter =
        seconds > 0 && (header <= 0 || seconds < header) ? seconds : header;
    double ms = shorter * 100;

    return ms < 1 ? 1 : ms > 100 ? 100 : (unsigned)ms;
}

sp_status sp_server_start(const struct sp_serve_config *cfg,
                          struct sp_server **out, unsigned *port, char *why)
{
    struct sp_server *srv = calloc(1, sizeof *srv);
    sp_status st;

    why[0] = '\0';
    if (srv == NULL)
        return ENOMEM;
    srv->cfg = *cfg;
    srv->root = srv->listen_fd = -1;
    sp_metrics_init(&srv->metrics);
    sp_budget_init(&srv->budget, cfg->max_memory);
    if ((st = sp_clients_init(&srv->clients, cfg->max_per_client,
                              cfg->max_connections)) != SP_OK ||
        (st = prepare(srv, port, why)) != SP_OK) {
        teardown(srv);
        return st;
    }
    if ((cfg->deadline > 0 || cfg->header_timeout > 0) &&
        (st = sp_watch_start(&srv->watch,
                             cfg->workers + cfg->max_connections,
                             watch_tick(cfg->deadline,
                                        cfg->header_timeout))) != SP_OK) {
        snprintf(why, SP_WHY_MAX, "cannot start the deadlines' watch");
        teardown(srv);
        return st;
    }
    st = sp_pool_start(&srv->pool, cfg->workers, cfg->queue, WORKER_STACK,
                       work);
    if (st != SP_OK) {
        snprintf(why, SP_WHY_MAX, "cannot start %u workers", cfg->workers);
        teardown(srv);
        return st;
    }
    srv->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
            MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
        0, NULL, NULL, handle, srv, MHD_OPTION_LISTEN_SOCKET, srv->listen_fd,
        MHD_OPTION_UNESCAPE_CALLBACK, as_sent, NULL,
        MHD_OPTION_URI_LOG_CALLBACK, uri_seen, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, connection_event, srv,
        MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, cfg->idle_timeout, MHD_OPTION_END);
    if (srv->daemon == NULL) {
        snprintf(why, SP_WHY_MAX, "libmicrohttpd would not start");
        sp_pool_stop(&srv->pool);
        teardown(srv);
        return EIO;
    }
    *out = srv;
    return SP_OK;
}

void sp_server_stop(struct sp_server *srv, unsigned drain)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    unsigned long waited = 0;

    /* New connections are still taken while the requests in flight
     * finish: a load balancer's /readyz is answered 503 (a connection
     * left in the listen backlog would not be), and every request on
     * them 503 with Connection: close. */
    atomic_store(&srv->draining, 1);
    while (atomic_load(&srv->active) > 0 && waited < drain * 100UL) {
        nanosleep(&tick, NULL);
        waited++;
    }
    /* No new connection; the socket is ours to close (teardown). */
    (void)MHD_quiesce_daemon(srv->daemon);
    /* Every job finishes and resumes its connection: libmicrohttpd may
     * not stop with a connection suspended. */
    sp_pool_stop(&srv->pool);
    MHD_stop_daemon(srv->daemon);
    teardown(srv);
}
