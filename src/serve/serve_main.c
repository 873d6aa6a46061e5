/* scaleppm-serve: `scaleppm serve`'s program (docs/serve.md).  Parses the
 * options, starts the server, waits for a signal that ends a process
 * (SIGTERM, SIGINT, SIGHUP and the others: stop_signals), then drains
 * and stops it; SIGUSR1 reopens the access log.  A program of its own,
 * linked with libmicrohttpd (and the GnuTLS it brings), so that scaleppm
 * stays a static PIE; scaleppm runs it for `scaleppm serve`
 * (cli/cli_serve.c). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accesslog.h"
#include "init.h"
#include "params.h"
#include "server.h"

#define EXIT_USAGE 2

/* key_value: what the key R takes, as the help shows it, into BUF (64
 * bytes). */
static const char *key_value(const struct sp_param *r, char *buf)
{
    size_t n = 0;

    switch (r->type) {
    case SP_PARAM_INT:
        snprintf(buf, 64, "=%ld..%ld", r->lo, r->hi);
        return buf;
    case SP_PARAM_CHOICE:
    case SP_PARAM_FILTER:
        for (size_t i = 0; sp_param_choice(r, i) != NULL && n < 64; i++)
            n += (size_t)snprintf(buf + n, 64 - n, "%c%s", i ? '|' : '=',
                                  sp_param_choice(r, i));
        return buf;
    case SP_PARAM_NAME:
        return "=EXT";
    case SP_PARAM_SIDE:
        return "=N";
    case SP_PARAM_BOX:
        return "=WxH";
    case SP_PARAM_COLOR:
        return "=RRGGBB";
    default:  /* SP_PARAM_FLAG */
        return "";
    }
}

/* usage_keys: the query's keys, from their table (params.h), on F. */
static void usage_keys(FILE *f)
{
    const struct sp_param *r;
    char v[64], key[96];

    for (size_t i = 0; (r = sp_params_row(i)) != NULL; i++) {
        if (r->needs & ~SP_PARAMS_IO)
            continue;  /* not a query's key */
        snprintf(key, sizeof key, "%s%s", r->name, key_value(r, v));
        fprintf(f, "  %-22s%s%s%s%s%s\n", key,
                strlen(key) < 22 ? " " : "\n                         ",
                r->help, r->needs & SP_PARAMS_IO ? " (--allow-io)" : "",
                r->alias ? "; also " : "", r->alias ? r->alias : "");
    }
}

static void usage(FILE *f)
{
    fprintf(f,
"usage: scaleppm serve --root DIR [OPTION]...\n"
"\n"
"Serve the images under DIR over HTTP/1.1, each scaled as the request\n"
"asks: GET /PATH?scale=N&format=EXT answers the bytes `scaleppm\n"
"--scale N DIR/PATH OUT.EXT` writes.  The query's keys are the command\n"
"line's long options of the same names, each given once:\n"
"\n");
    usage_keys(f);
    fprintf(f,
"\n"
"Keep it on loopback, behind a reverse proxy, where it faces a network.\n"
"\n"
"      --root DIR        the directory served (required)\n"
"      --listen A:P      the address and port (default 127.0.0.1:8080;\n"
"                        IPv6 in brackets: [::1]:8080; port 0: any free\n"
"                        one), or unix:PATH, a Unix socket\n"
"      --workers N       jobs at once (default: one per CPU)\n"
"      --queue N         requests waiting for a worker at most; past it,\n"
"                        503 with Retry-After (default: 4 a worker)\n"
"  -t, --threads T       each job's threads (default 1)\n"
"      --max-pixels N    refuse (413) an input or output of more than N\n"
"                        pixels, from its header\n"
"      --allow-io        take io=read|mmap|pread|auto from the query\n"
"      --max-memory B    admit a request only while the bytes the jobs\n"
"                        admitted and the answers not yet sent hold\n"
"                        (from their headers) stay under B (K, M, G:\n"
"                        binary multiples); past it 503, and 413 for one\n"
"                        that alone is over it\n"
"      --max-output B    refuse (413), before its job, a request whose\n"
"                        output's raster (from its header) is over B\n"
"                        bytes (default 256M; 0: no limit)\n"
"      --max-connections N\n"
"                        connections at once (default 256); past it a\n"
"                        new one waits in the kernel's backlog\n"
"      --max-per-client N\n"
"                        requests in flight from one address; past it\n"
"                        429 with Retry-After (default 0: no limit)\n"
"      --timeout S       close a connection idle S seconds (default 30)\n"
"      --header-timeout S\n"
"                        close a connection that has not sent a request's\n"
"                        whole header S seconds (a decimal) after its\n"
"                        accept or its last answer, however it trickles\n"
"                        (default 10; 0: no limit)\n"
"      --deadline S      answer 503 to a request not done S seconds (a\n"
"                        decimal) after its headers, queue included;\n"
"                        its job is stopped (default 60; 0: no limit)\n"
"      --drain S         at SIGTERM, wait up to S seconds for the\n"
"                        requests in flight (default 30)\n"
"      --log FILE        the access log appended to FILE, not standard\n"
"                        error; SIGUSR1 opens FILE again (log rotation)\n"
"  -q, --quiet           no access log\n"
"  -h, --help            show this help\n"
"  -V, --version         show the version\n"
"\n"
"Also /healthz (200 while it runs), /readyz (503 while it drains).\n"
"SIGTERM, SIGINT, SIGHUP (and any other signal that would end it but\n"
"SIGUSR1) drain it: the requests in flight finish, for up to --drain.\n");
}

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("scaleppm serve: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see scaleppm serve --help)\n", stderr);
    return EXIT_USAGE;
}

/* parse_count: all of S, a decimal number in [LO, HI], into *OUT. */
static int parse_count(const char *s, unsigned long long lo,
                       unsigned long long hi, unsigned long long *out)
{
    char *end;

    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno != 0 || *end != '\0' || *out < lo || *out > hi ? -1 : 0;
}

/* parse_bytes: all of S, a number of bytes with an optional K, M or G
 * (binary multiples), into *OUT. */
static int parse_bytes(const char *s, uint64_t *out)
{
    static const char units[] = "KMG";
    char *end;
    const char *u;
    unsigned long long v;

    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    if (*end != '\0') {
        if ((u = strchr(units, *end)) == NULL || end[1] != '\0')
            return -1;
        for (long i = 0; i <= u - units; i++) {
            if (v > UINT64_MAX / 1024)
                return -1;
            v *= 1024;
        }
    }
    *out = v;
    return 0;
}

/* parse_seconds: all of S, a decimal number of seconds from 0 to a day,
 * into *OUT. */
static int parse_seconds(const char *s, double *out)
{
    char *end;

    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    *out = strtod(s, &end);
    return errno != 0 || *end != '\0' || !(*out <= 86400) ? -1 : 0;
}

/* parse_listen: "ADDR:PORT", "[ADDR6]:PORT" or "unix:PATH" into CFG
 * (ADDR kept in HOST, HOSTLEN, without the brackets). */
static int parse_listen(const char *s, struct sp_serve_config *cfg,
                        char *host, size_t hostlen)
{
    const char *colon = strrchr(s, ':');
    int bracket = s[0] == '[';
    unsigned long long port;

    if (strncmp(s, "unix:", 5) == 0) {
        cfg->unix_path = s + 5;
        return s[5] == '\0' ? -1 : 0;
    }
    if (colon == NULL || (size_t)(colon - s) >= hostlen ||
        parse_count(colon + 1, 0, 65535, &port) != 0 ||
        (bracket && (colon - s < 3 || colon[-1] != ']')))
        return -1;
    memcpy(host, s + bracket, (size_t)(colon - s - 2 * bracket));
    host[colon - s - 2 * bracket] = '\0';
    cfg->host = host;
    cfg->port = (unsigned)port;
    return 0;
}

static unsigned cpus(void)
{
    cpu_set_t set;

    return sched_getaffinity(0, sizeof set, &set) == 0
               ? (unsigned)CPU_COUNT(&set)
               : 1;
}

enum { OPT_ROOT = 256, OPT_LISTEN, OPT_WORKERS, OPT_QUEUE, OPT_MAX_PIXELS,
       OPT_ALLOW_IO, OPT_MAX_CONN, OPT_TIMEOUT, OPT_DRAIN, OPT_DEADLINE,
       OPT_MAX_MEMORY, OPT_MAX_OUTPUT, OPT_MAX_PER_CLIENT, OPT_LOG,
       OPT_HEADER_TIMEOUT };

/* The options whose value is a count into an unsigned field, with their
 * bounds, in the order of count_field(). */
static const struct {
    int opt;
    unsigned long long lo, hi;
} counts[] = {
    {OPT_WORKERS, 1, 1024},   {'t', 1, 1024},
    {OPT_MAX_CONN, 1, 1 << 20}, {OPT_MAX_PER_CLIENT, 0, 1 << 20},
    {OPT_TIMEOUT, 1, 86400},  {OPT_DRAIN, 0, 86400},
};
#define NCOUNTS (sizeof counts / sizeof *counts)

/* count_field: the field of CFG (or DRAIN) that counts[I] sets. */
static unsigned *count_field(size_t i, struct sp_serve_config *cfg,
                             unsigned *drain)
{
    unsigned *fields[NCOUNTS] = {&cfg->workers, &cfg->threads,
                                 &cfg->max_connections, &cfg->max_per_client,
                                 &cfg->idle_timeout, drain};

    return fields[i];
}

/* parse_value: option C's argument ARG into CFG (or *DRAIN): 0 or -1. */
static int parse_value(int c, const char *arg, struct sp_serve_config *cfg,
                       unsigned *drain, char *host, size_t hostlen)
{
    unsigned long long v;

    for (size_t i = 0; i < NCOUNTS; i++)
        if (counts[i].opt == c) {
            if (parse_count(arg, counts[i].lo, counts[i].hi, &v))
                return -1;
            *count_field(i, cfg, drain) = (unsigned)v;
            return 0;
        }
    switch (c) {
    case OPT_LISTEN:
        return parse_listen(arg, cfg, host, hostlen);
    case OPT_QUEUE:
        if (parse_count(arg, 0, 1 << 20, &v))
            return -1;
        cfg->queue = (size_t)v;
        return 0;
    case OPT_MAX_PIXELS:
        if (parse_count(arg, 1, UINT64_MAX, &v))
            return -1;
        cfg->max_pixels = v;
        return 0;
    case OPT_MAX_MEMORY:
        return parse_bytes(arg, &cfg->max_memory);
    case OPT_MAX_OUTPUT:
        return parse_bytes(arg, &cfg->max_output);
    case OPT_HEADER_TIMEOUT:
        return parse_seconds(arg, &cfg->header_timeout);
    default:  /* OPT_DEADLINE */
        return parse_seconds(arg, &cfg->deadline);
    }
}

/* parse: ARGV into CFG, *DRAIN and *LOG (--log's FILE, "-" for standard
 * error, NULL for -q): -1 to run, or the exit status. */
static int parse(int argc, char **argv, struct sp_serve_config *cfg,
                 unsigned *drain, const char **log, char *host,
                 size_t hostlen)
{
    static const struct option longopts[] = {
        {"root", required_argument, NULL, OPT_ROOT},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"queue", required_argument, NULL, OPT_QUEUE},
        {"threads", required_argument, NULL, 't'},
        {"max-pixels", required_argument, NULL, OPT_MAX_PIXELS},
        {"allow-io", no_argument, NULL, OPT_ALLOW_IO},
        {"max-connections", required_argument, NULL, OPT_MAX_CONN},
        {"max-per-client", required_argument, NULL, OPT_MAX_PER_CLIENT},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
        {"drain", required_argument, NULL, OPT_DRAIN},
        {"deadline", required_argument, NULL, OPT_DEADLINE},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"max-output", required_argument, NULL, OPT_MAX_OUTPUT},
        {"log", required_argument, NULL, OPT_LOG},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c, queue_set = 0;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_ROOT:
            cfg->root = optarg;
            break;
        case OPT_ALLOW_IO:
            cfg->allow_io = 1;
            break;
        case OPT_LOG:
            *log = optarg;
            break;
        case 'q':
            *log = NULL;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("scaleppm serve %s (%s)\n", SP_VERSION, SP_COMMIT);
            return 0;
        case ':':
            return usage_error("%s needs an argument", argv[optind - 1]);
        case '?':
            return usage_error("unknown option '%s'", argv[optind - 1]);
        default:
            queue_set |= c == OPT_QUEUE;
            if (parse_value(c, optarg, cfg, drain, host, hostlen) != 0)
                return usage_error("%s '%s': a bad value",
                                   argv[optind - 2], optarg);
        }
    }
    if (optind < argc)
        return usage_error("'%s': no file arguments", argv[optind]);
    if (cfg->root == NULL)
        return usage_error("%s", "missing --root DIR");
    if (!queue_set)
        cfg->queue = (size_t)cfg->workers * 4;
    return -1;
}

/* The signals whose default action ends a process (signal(7)), but
 * those a thread raises itself (SIGBUS, SIGSEGV, SIGFPE, SIGILL, ...,
 * never blocked) and SIGPIPE and SIGXFSZ (ignored: a client gone and
 * the file size limit are errors, EPIPE and EFBIG, not deaths): each
 * drains the server as SIGTERM does, but SIGUSR1, which reopens the
 * access log; the real-time signals as well (wait_set()). */
static const int stop_signals[] = {
    SIGHUP,  SIGINT,    SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
    SIGVTALRM, SIGPROF, SIGXCPU, SIGIO,
#ifdef SIGPWR
    SIGPWR,
#endif
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
};

/* wait_set: SET, the signals main() waits for, each blocked in every
 * thread started after (they inherit the mask) and set to its default
 * action: an ignored signal is discarded, never waited for (a shell
 * starts a background job with SIGINT ignored). */
static void wait_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
        sigaddset(set, stop_signals[i]);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
        sigaddset(set, sig);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(set, sig) == 1)
            signal(sig, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
}

/* die_by: after the drain, the end SIG asks for: exit 0 for a stop
 * (SIGTERM, SIGINT, SIGHUP), else death by SIG, so that whoever sent it
 * sees it in the status (128 + N), as the command line's. */
static int die_by(int sig)
{
    sigset_t one;

    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
        return 0;
    sigemptyset(&one);
    sigaddset(&one, sig);
    (void)raise(sig);  /* pending while blocked; its action the default */
    (void)pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    return 128 + sig;  /* not reached */
}

/* signal_name: SIG's name, "SIGTERM", into BUF (16 bytes). */
static const char *signal_name(int sig, char *buf)
{
    const char *abbrev = sigabbrev_np(sig);

    if (abbrev != NULL)
        snprintf(buf, 16, "SIG%s", abbrev);
    else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        snprintf(buf, 16, "SIGRTMIN+%d", sig - SIGRTMIN);
    else
        snprintf(buf, 16, "signal %d", sig);
    return buf;
}

int main(int argc, char **argv)
{
    const char *log_path = "-";
    char host[64] = "127.0.0.1", why[SP_WHY_MAX], name[16];
    struct sp_serve_config cfg = {
        .host = host, .port = 8080, .workers = cpus(), .threads = 1,
        .max_connections = 256, .idle_timeout = 30, .header_timeout = 10,
        .deadline = 60, .max_output = (uint64_t)256 << 20,
        .version = SP_VERSION "-" SP_COMMIT};
    struct sp_accesslog log;
    struct sp_server *srv;
    unsigned drain = 30, port;
    sigset_t waited;
    int rc = parse(argc, argv, &cfg, &drain, &log_path, host, sizeof host),
        sig;
    sp_status st;

    if (rc >= 0)
        return rc;
    wait_set(&waited);
    /* One malloc arena for every thread: a raster a request frees is
     * then reused by the next request, whichever worker takes it, and the
     * heap holds at most the rasters that were in flight at once (what
     * --max-memory admits).  With glibc's arena a thread, each worker's
     * arena kept the last raster it freed: 32 workers on 2 CPUs held
     * 16 rasters with one request in flight (docs/serve.md).  Its
     * thresholds fixed where glibc's own rules leave them once a block
     * of 32 MiB was freed: a block under 32 MiB from the heap, and the
     * heap's top given back past 64 MiB free.  Left to move, they stayed
     * under what 8 requests at once free, so the heap was given back and
     * faulted in again: 132 faults a request on read, 60 on pread. */
    (void)mallopt(M_ARENA_MAX, 1);
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
    st = sp_accesslog_open(&log,
                           log_path != NULL && strcmp(log_path, "-") != 0
                               ? log_path
                               : NULL,
                           log_path != NULL ? stderr : NULL);
    if (st != SP_OK) {
        fprintf(stderr, "scaleppm serve: --log '%s': %s\n", log_path,
                strerror(st));
        return EXIT_FAILURE;
    }
    cfg.log = &log;
    st = sp_lib_init();  /* the SIGBUS guard, libnetpbm: the program's to ask */
    if (st == SP_OK)
        st = sp_server_start(&cfg, &srv, &port, why);
    if (st != SP_OK) {
        fprintf(stderr, "scaleppm serve: %s%s%s\n", why, why[0] ? ": " : "",
                strerror(st > 0 ? st : EIO));
        sp_accesslog_close(&log);
        return EXIT_FAILURE;
    }
    if (cfg.unix_path != NULL)
        fprintf(stderr, "scaleppm serve: listening on unix:%s\n",
                cfg.unix_path);
    else if (strchr(cfg.host, ':') != NULL)
        fprintf(stderr, "scaleppm serve: listening on http://[%s]:%u/\n",
                cfg.host, port);
    else
        fprintf(stderr, "scaleppm serve: listening on http://%s:%u/\n",
                cfg.host, port);
    fflush(stderr);
    for (;;) {
        if (sigwait(&waited, &sig) != 0)
            continue;
        if (sig != SIGUSR1)
            break;
        if ((st = sp_accesslog_reopen(&log)) != SP_OK)
            fprintf(stderr, "scaleppm serve: SIGUSR1: --log '%s': %s; "
                    "the log goes on where it was\n", log_path,
                    strerror(st));
    }
    fprintf(stderr, "scaleppm serve: %s: stopping (draining up to %u s)\n",
            signal_name(sig, name), drain);
    sp_server_stop(srv, drain);
    sp_accesslog_close(&log);
    return die_by(sig);
}
