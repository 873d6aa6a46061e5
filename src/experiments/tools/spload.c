/* spload: the server suite's open-loop load generator (run_experiments.sh
 * --suite server, scripts/server.sh).
 *   spload -r RATE -d SECONDS [-c CONNS] [-t TIMEOUT] ADDR TARGET...
 *       ADDR is HOST:PORT (IPv4) or unix:PATH.  Request i is due at
 *       t0 + i / RATE, for SECONDS; it is sent, GET TARGET (the targets
 *       in turn) over HTTP/1.1 keep-alive, on an idle connection, or on a
 *       new one while fewer than CONNS (default 64) are open; else it
 *       waits for one.  Its latency runs from the time it was due, not
 *       from the time it went out, so a slow answer delays no later
 *       measurement (no coordinated omission).  A request unanswered
 *       TIMEOUT seconds (default 60) after it was due is a timeout, and
 *       its connection is closed.  Prints one line of KEY=VALUE: due,
 *       done, errors, timeouts, s2xx, s503, sother, elapsed_ns, and the
 *       latencies of the answered requests p50_ns p90_ns p99_ns p999_ns
 *       max_ns (nearest rank); how late the requests that found a
 *       connection free went out after they were due, lag_p50_ns
 *       lag_p99_ns lag_max_ns (the client's own delay: the latencies
 *       include it), and waited, the requests that found every
 *       connection busy; then a line a distinct answer, "body
 *       TARGET STATUS HASH BYTES COUNT", HASH the body's (hash_add).
 *       Exits 1, with one line on stderr, when it cannot run at all.
 *   spload --hash FILE
 *       print FILE's hash as a body's is printed. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "timing.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define HEAD_MAX 16384
#define READ_CHUNK 65536
#define MAX_BODIES 4096

/* A body's hash, fed in pieces of any size: FNV-1a's prime over 64-bit
 * words (native order), each product folded by a shift, so that a word
 * costs one multiply where FNV-1a's bytes cost eight; the bytes left
 * after the last whole word, FNV-1a's byte by byte.  Every step is a
 * bijection of the state, so a body that differs from another in one
 * word never hashes alike.  Fast enough that the one client thread is
 * not what limits the rate (FNV-1a's bytes took a third of a CPU at a
 * thousand 240 KiB answers a second). */
struct hasher {
    uint64_t h;
    unsigned char tail[8];
    unsigned ntail;
};

/* A request: when it was due, when it went out (0: never), and what
 * came back. */
struct req {
    uint64_t due, sent, done;
    int target, status;  /* status 0: no answer */
    int waited;          /* found every connection busy when due */
    uint64_t hash, bytes;
};

/* A connection: its socket, the request it carries (-1: idle), and the
 * answer as far as it has come. */
struct conn {
    int fd;
    long req;
    char head[HEAD_MAX];
    size_t head_len;
    int in_body, status, close_after;
    long long length;  /* Content-Length; -1: to the end of the stream */
    uint64_t got;
    struct hasher hash;
};

/* A distinct answer and how many times it came. */
struct body {
    int target, status;
    uint64_t hash, bytes, count;
};

struct load {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char **targets;
    int ntargets, nconns, epfd;
    uint64_t timeout_ns;
    struct conn *conns;
    struct req *reqs;
    long nreqs, next_sent;
    long errors, timeouts;
};

static int usage(void)
{
    fprintf(stderr, "usage: spload -r RATE -d SECONDS [-c CONNS] "
            "[-t TIMEOUT] ADDR TARGET... | spload --hash FILE\n");
    return 2;
}

static void hash_start(struct hasher *x)
{
    x->h = FNV_OFFSET;
    x->ntail = 0;
}

static uint64_t hash_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * FNV_PRIME;
    return h ^ (h >> 32);
}

static void hash_add(struct hasher *x, const unsigned char *p, size_t n)
{
    uint64_t w;

    while (x->ntail > 0 && x->ntail < 8 && n > 0) {
        x->tail[x->ntail++] = *p++;
        n--;
    }
    if (x->ntail == 8) {
        memcpy(&w, x->tail, 8);
        x->h = hash_word(x->h, w);
        x->ntail = 0;
    }
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        x->h = hash_word(x->h, w);
    }
    memcpy(x->tail + x->ntail, p, n);
    x->ntail += (unsigned)n;
}

static uint64_t hash_end(const struct hasher *x)
{
    uint64_t h = x->h;

    for (unsigned i = 0; i < x->ntail; i++)
        h = (h ^ x->tail[i]) * FNV_PRIME;
    return h;
}

static int hash_file(const char *path)
{
    unsigned char buf[READ_CHUNK];
    struct hasher x;
    ssize_t n;
    int fd = open(path, O_RDONLY);

    if (fd < 0) {
        fprintf(stderr, "spload: %s: %s\n", path, strerror(errno));
        return 1;
    }
    hash_start(&x);
    while ((n = read(fd, buf, sizeof buf)) > 0)
        hash_add(&x, buf, (size_t)n);
    close(fd);
    if (n < 0) {
        fprintf(stderr, "spload: %s: %s\n", path, strerror(errno));
        return 1;
    }
    printf("%016" PRIx64 "\n", hash_end(&x));
    return 0;
}

/* parse_addr: ADDR (HOST:PORT, IPv4, or unix:PATH) into L's address. */
static int parse_addr(const char *s, struct load *l)
{
    if (strncmp(s, "unix:", 5) == 0) {
        struct sockaddr_un *u = (struct sockaddr_un *)&l->addr;

        if (strlen(s + 5) >= sizeof u->sun_path)
            return -1;
        u->sun_family = AF_UNIX;
        strcpy(u->sun_path, s + 5);
        l->addr_len = sizeof *u;
        return 0;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)&l->addr;
    const char *colon = strrchr(s, ':');
    char host[64];
    char *end;
    long port;

    if (colon == NULL || (size_t)(colon - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port < 1 || port > 65535)
        return -1;
    in->sin_family = AF_INET;
    in->sin_port = htons((uint16_t)port);
    l->addr_len = sizeof *in;
    return inet_pton(AF_INET, host, &in->sin_addr) == 1 ? 0 : -1;
}

/* conn_open: a new connection in slot C (blocking connect: the server is
 * on this machine), then non-blocking and watched for reading. */
static int conn_open(struct load *l, struct conn *c)
{
    struct epoll_event ev = {.events = EPOLLIN};
    int fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&l->addr, l->addr_len) < 0 ||
        fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
        close(fd);
        return -1;
    }
    ev.data.ptr = c;
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        close(fd);
        return -1;
    }
    c->fd = fd;
    c->req = -1;
    return 0;
}

static void conn_close(struct conn *c)
{
    if (c->fd >= 0)
        close(c->fd);  /* also leaves the epoll set */
    c->fd = -1;
    c->req = -1;
}

/* conn_send: request R on C.  The request is short and the connection
 * idle, so one write takes it whole or the connection is at fault. */
static int conn_send(struct load *l, struct conn *c, long r)
{
    char buf[1024];
    const char *target = l->targets[l->reqs[r].target];
    int n = snprintf(buf, sizeof buf, "GET %s HTTP/1.1\r\nHost: spload\r\n"
                     "\r\n", target);

    if (n < 0 || (size_t)n >= sizeof buf ||
        write(c->fd, buf, (size_t)n) != n)
        return -1;
    l->reqs[r].sent = sp_now_ns();
    c->req = r;
    c->head_len = 0;
    c->in_body = 0;
    c->got = 0;
    hash_start(&c->hash);
    return 0;
}

/* parse_head: C's status line and the headers it needs, once the blank
 * line has come; the rest of the buffer is the body's first bytes. */
static int parse_head(struct conn *c, size_t end)
{
    char *line, *save = NULL;

    c->head[end] = '\0';
    line = strtok_r(c->head, "\r\n", &save);
    if (line == NULL || sscanf(line, "HTTP/1.%*d %d", &c->status) != 1)
        return -1;
    c->length = -1;
    c->close_after = 0;
    while ((line = strtok_r(NULL, "\r\n", &save)) != NULL) {
        if (strncasecmp(line, "Content-Length:", 15) == 0)
            c->length = strtoll(line + 15, NULL, 10);
        else if (strncasecmp(line, "Connection:", 11) == 0 &&
                 strcasestr(line + 11, "close") != NULL)
            c->close_after = 1;
        else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0)
            return -1;  /* chunked bodies are not read here */
    }
    if (c->length < 0)
        c->close_after = 1;
    return 0;
}

/* take_body: N bytes of C's body. */
static void take_body(struct conn *c, const char *p, size_t n)
{
    hash_add(&c->hash, (const unsigned char *)p, n);
    c->got += n;
}

/* finish: C's request answered whole; C idle again or closed. */
static void finish(struct load *l, struct conn *c)
{
    struct req *r = &l->reqs[c->req];

    r->done = sp_now_ns();
    r->status = c->status;
    r->hash = hash_end(&c->hash);
    r->bytes = c->got;
    if (c->close_after)
        conn_close(c);
    c->req = -1;
}

/* fail_conn: C's request gets no answer; C is closed. */
static void fail_conn(struct load *l, struct conn *c)
{
    if (c->req >= 0)
        l->errors++;
    conn_close(c);
}

/* take_head: bytes P[0..N) while the head is incomplete; returns how many
 * were head, the rest being body, or -1 on a bad head. */
static long take_head(struct conn *c, const char *p, size_t n)
{
    size_t room = HEAD_MAX - 1 - c->head_len, k = n < room ? n : room;
    char *end;

    memcpy(c->head + c->head_len, p, k);
    c->head_len += k;
    c->head[c->head_len] = '\0';
    end = strstr(c->head, "\r\n\r\n");
    if (end == NULL)
        return c->head_len == HEAD_MAX - 1 ? -1 : (long)k;
    size_t head_end = (size_t)(end - c->head) + 4;
    size_t used = k - (c->head_len - head_end);
    if (parse_head(c, head_end) < 0)
        return -1;
    c->in_body = 1;
    return (long)used;
}

/* on_readable: what C's socket holds, read and taken. */
static void on_readable(struct load *l, struct conn *c)
{
    char buf[READ_CHUNK];
    ssize_t n;

    while ((n = read(c->fd, buf, sizeof buf)) > 0) {
        size_t off = 0;

        if (c->req < 0) {  /* bytes nobody asked for */
            fail_conn(l, c);
            return;
        }
        if (!c->in_body) {
            long used = take_head(c, buf, (size_t)n);
            if (used < 0) {
                fail_conn(l, c);
                return;
            }
            off = (size_t)used;
        }
        if (c->in_body)
            take_body(c, buf + off, (size_t)n - off);
        if (c->in_body && c->length >= 0 && c->got >= (uint64_t)c->length) {
            finish(l, c);
            if (c->fd < 0)
                return;
        }
    }
    if (n == 0 && c->req >= 0 && c->in_body && c->length < 0) {
        finish(l, c);  /* a body that runs to the end of the stream */
        conn_close(c);
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        fail_conn(l, c);
    }
}

/* a_conn: into *OUT an idle connection, or a new one in a free slot.
 * Returns 0, 1 when every slot is busy (the request waits), -1 when a
 * connection cannot be made. */
static int a_conn(struct load *l, struct conn **out)
{
    struct conn *free_slot = NULL;

    for (int i = 0; i < l->nconns; i++) {
        if (l->conns[i].fd >= 0 && l->conns[i].req < 0) {
            *out = &l->conns[i];
            return 0;
        }
        if (l->conns[i].fd < 0 && free_slot == NULL)
            free_slot = &l->conns[i];
    }
    if (free_slot == NULL)
        return 1;
    *out = free_slot;
    return conn_open(l, free_slot);
}

/* send_due: every request due by NOW that a connection can take, sent in
 * order.  A request whose connection or send fails is an error. */
static void send_due(struct load *l, uint64_t now)
{
    while (l->next_sent < l->nreqs && l->reqs[l->next_sent].due <= now) {
        struct conn *c = NULL;
        int got = a_conn(l, &c);

        if (got > 0) {
            l->reqs[l->next_sent].waited = 1;
            return;
        }
        if (got < 0 || conn_send(l, c, l->next_sent) < 0) {
            if (got == 0)
                conn_close(c);
            l->errors++;
        }
        l->next_sent++;
    }
}

/* expire: the requests in flight past their timeout, their connections
 * closed. */
static void expire(struct load *l, uint64_t now)
{
    for (int i = 0; i < l->nconns; i++) {
        struct conn *c = &l->conns[i];

        if (c->fd >= 0 && c->req >= 0 &&
            now - l->reqs[c->req].due > l->timeout_ns) {
            l->timeouts++;
            conn_close(c);
        }
    }
}

static int busy(const struct load *l)
{
    for (int i = 0; i < l->nconns; i++)
        if (l->conns[i].fd >= 0 && l->conns[i].req >= 0)
            return 1;
    return 0;
}

/* wait_ms: how long to wait for the sockets before the next request is
 * due (rounded up), or for a timeout to check. */
static int wait_ms(const struct load *l, uint64_t now)
{
    uint64_t until = now + 100000000;  /* a tenth of a second at most */

    if (l->next_sent < l->nreqs && l->reqs[l->next_sent].due < until)
        until = l->reqs[l->next_sent].due;
    return until <= now ? 0 : (int)((until - now + 999999) / 1000000);
}

/* run: the requests, due at their times, until every one is answered,
 * failed or timed out. */
static void run(struct load *l)
{
    struct epoll_event ev[64];

    for (;;) {
        uint64_t now = sp_now_ns();

        send_due(l, now);
        expire(l, now);
        if (l->next_sent == l->nreqs && !busy(l))
            return;
        int n = epoll_wait(l->epfd, ev, 64, wait_ms(l, now));
        for (int i = 0; i < n; i++) {
            struct conn *c = ev[i].data.ptr;
            if (c->fd >= 0)
                on_readable(l, c);
        }
    }
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* rank: the nearest-rank P-th percentile of the N sorted values V. */
static uint64_t rank(const uint64_t *v, size_t n, double p)
{
    size_t k = (size_t)(p / 100 * (double)n + 0.999999);

    if (n == 0)
        return 0;
    return v[k == 0 ? 0 : (k > n ? n - 1 : k - 1)];
}

/* count_body: R's answer into the distinct answers B[0..*N). */
static void count_body(struct body *b, size_t *n, const struct req *r)
{
    for (size_t i = 0; i < *n; i++)
        if (b[i].target == r->target && b[i].status == r->status &&
            b[i].hash == r->hash && b[i].bytes == r->bytes) {
            b[i].count++;
            return;
        }
    if (*n == MAX_BODIES)
        return;
    b[*n] = (struct body){r->target, r->status, r->hash, r->bytes, 1};
    (*n)++;
}

/* report: the summary line and the distinct answers. */
static int report(const struct load *l, uint64_t elapsed)
{
    uint64_t *lat = malloc(sizeof *lat * (size_t)l->nreqs + 1);
    uint64_t *lag = malloc(sizeof *lag * (size_t)l->nreqs + 1);
    struct body *b = malloc(sizeof *b * MAX_BODIES);
    size_t n = 0, nb = 0, nl = 0;
    long ok = 0, s503 = 0, other = 0, waited = 0;

    if (lat == NULL || lag == NULL || b == NULL) {
        free(lat);
        free(lag);
        free(b);
        fprintf(stderr, "spload: out of memory\n");
        return 1;
    }
    for (long i = 0; i < l->nreqs; i++) {
        const struct req *r = &l->reqs[i];
        if (r->sent != 0 && !r->waited)
            lag[nl++] = r->sent - r->due;
        waited += r->waited;
        if (r->status == 0)
            continue;
        lat[n++] = r->done - r->due;
        ok += r->status >= 200 && r->status < 300;
        s503 += r->status == 503;
        other += (r->status < 200 || r->status >= 300) && r->status != 503;
        count_body(b, &nb, r);
    }
    qsort(lat, n, sizeof *lat, by_value);
    qsort(lag, nl, sizeof *lag, by_value);
    printf("due=%ld done=%zu errors=%ld timeouts=%ld s2xx=%ld s503=%ld "
           "sother=%ld elapsed_ns=%" PRIu64 " p50_ns=%" PRIu64
           " p90_ns=%" PRIu64 " p99_ns=%" PRIu64 " p999_ns=%" PRIu64
           " max_ns=%" PRIu64 " lag_p50_ns=%" PRIu64 " lag_p99_ns=%" PRIu64
           " lag_max_ns=%" PRIu64 " waited=%ld\n", l->nreqs, n, l->errors,
           l->timeouts, ok, s503, other, elapsed, rank(lat, n, 50),
           rank(lat, n, 90), rank(lat, n, 99), rank(lat, n, 99.9),
           n ? lat[n - 1] : 0, rank(lag, nl, 50), rank(lag, nl, 99),
           nl ? lag[nl - 1] : 0, waited);
    for (size_t i = 0; i < nb; i++)
        printf("body %s %d %016" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
               l->targets[b[i].target], b[i].status, b[i].hash, b[i].bytes,
               b[i].count);
    free(lat);
    free(lag);
    free(b);
    return 0;
}

/* parse_args: the options into L; the rate and duration into *RATE and
 * *SECONDS.  Returns 0, or 2 on a usage error. */
static int parse_args(int argc, char **argv, struct load *l, double *rate,
                      double *seconds)
{
    double timeout = 60;
    int opt;

    l->nconns = 64;
    while ((opt = getopt(argc, argv, "r:d:c:t:")) != -1) {
        switch (opt) {
        case 'r': *rate = atof(optarg); break;
        case 'd': *seconds = atof(optarg); break;
        case 'c': l->nconns = atoi(optarg); break;
        case 't': timeout = atof(optarg); break;
        default: return usage();
        }
    }
    if (*rate <= 0 || *seconds <= 0 || l->nconns < 1 || timeout <= 0 ||
        argc - optind < 2)
        return usage();
    if (parse_addr(argv[optind], l) < 0) {
        fprintf(stderr, "spload: %s: not HOST:PORT or unix:PATH\n",
                argv[optind]);
        return 2;
    }
    l->timeout_ns = (uint64_t)(timeout * 1e9);
    l->targets = argv + optind + 1;
    l->ntargets = argc - optind - 1;
    return 0;
}

/* schedule: L's requests, due every 1/RATE seconds from T0 for SECONDS,
 * the targets in turn. */
static int schedule(struct load *l, double rate, double seconds, uint64_t t0)
{
    l->nreqs = (long)(rate * seconds);
    if (l->nreqs < 1)
        l->nreqs = 1;
    l->reqs = calloc((size_t)l->nreqs, sizeof *l->reqs);
    l->conns = calloc((size_t)l->nconns, sizeof *l->conns);
    if (l->reqs == NULL || l->conns == NULL)
        return -1;
    for (long i = 0; i < l->nreqs; i++) {
        l->reqs[i].due = t0 + (uint64_t)((double)i * 1e9 / rate);
        l->reqs[i].target = (int)(i % l->ntargets);
    }
    for (int i = 0; i < l->nconns; i++)
        l->conns[i].fd = -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct load l = {0};
    double rate = 0, seconds = 0;
    int rc;

    if (argc == 3 && strcmp(argv[1], "--hash") == 0)
        return hash_file(argv[2]);
    if ((rc = parse_args(argc, argv, &l, &rate, &seconds)) != 0)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    l.epfd = epoll_create1(EPOLL_CLOEXEC);
    uint64_t t0 = sp_now_ns();
    if (l.epfd < 0 || schedule(&l, rate, seconds, t0) < 0) {
        fprintf(stderr, "spload: cannot set up: %s\n", strerror(errno));
        return 1;
    }
    run(&l);
    rc = report(&l, sp_now_ns() - t0);
    free(l.reqs);
    free(l.conns);
    close(l.epfd);
    return rc;
}
