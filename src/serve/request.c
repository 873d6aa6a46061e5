/* A request's options, and the HTTP validators of its answer
 * (request.h). */
#include "request.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "outfmt.h"


size_t sp_serve_query_pairs(const char *query)
{
    size_t n = query[0] != '\0';

    for (const char *p = query; (p = strchr(p, '&')) != NULL; p++)
        n++;
    return n;
}

void sp_serve_ask_init(struct sp_serve_ask *ask)
{
    memset(ask, 0, sizeof *ask);
    sp_params_init(&ask->params, &ask->job, 0);
}

sp_status sp_serve_ask_set(struct sp_serve_ask *ask, const char *key,
                           const char *value, int allow_io,
                           const char **why)
{
    ask->params.allow = allow_io ? SP_PARAMS_IO : 0;
    *why = ask->why;
    return sp_params_set(&ask->params, &ask->job, key, value, ask->why);
}

sp_status sp_serve_ask_check(struct sp_serve_ask *ask, const char **why)
{
    struct sp_job *job = &ask->job;
    const struct sp_outext *e;

    *why = ask->why;
    if (sp_params_check(&ask->params, job, ask->why) != SP_OK ||
        sp_params_suit(&ask->params, sp_params_format(&ask->params), NULL,
                       ask->why) != SP_OK)
        return EINVAL;
    e = sp_outfmt_ext(ask->params.format, &job->fmt);
    if (e == NULL)
        job->fmt = SP_OUT_PNM;
    /* a PNM's type as its extension names it; the others' none */
    job->pnm_type = e != NULL && sp_outfmts[job->fmt].netpbm
                        ? e->want
                        : SP_WANT_KEEP;
    return SP_OK;
}

const char *sp_serve_media_type(const char *ext)
{
    enum sp_outfmt fmt;
    const struct sp_outext *e = sp_outfmt_ext(ext, &fmt);

    return e != NULL ? e->media_type : "application/octet-stream";
}

/* fnv: 64-bit FNV-1a of LEN bytes at P, on from H. */
static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

void sp_serve_etag(const struct stat *sb, const struct sp_serve_ask *ask,
                   const char *version, char *out)
{
    char id[160], canon[SP_PARAMS_CANON_MAX];
    int n = snprintf(id, sizeof id, "%ju:%ju:%jd:%jd.%ld:%jd.%ld|",
                     (uintmax_t)sb->st_dev, (uintmax_t)sb->st_ino,
                     (intmax_t)sb->st_size, (intmax_t)sb->st_mtim.tv_sec,
                     sb->st_mtim.tv_nsec, (intmax_t)sb->st_ctim.tv_sec,
                     sb->st_ctim.tv_nsec);
    size_t len = sp_params_canonical(&ask->params, &ask->job, canon,
                                     sizeof canon);
    uint64_t h = fnv(UINT64_C(0xcbf29ce484222325), id,
                     n < 0 ? 0 : (size_t)n < sizeof id ? (size_t)n
                                                       : sizeof id - 1);

    h = fnv(h, canon, len < sizeof canon ? len : sizeof canon - 1);
    h = fnv(h, "|", 1);
    h = fnv(h, version, strlen(version));
    snprintf(out, SP_ETAG_MAX, "\"%016jx\"", (uintmax_t)h);
}

/* lists_tag: whether the If-None-Match list INM holds ETAG, each member's
 * weakness ("W/") ignored. */
static int lists_tag(const char *inm, const char *etag)
{
    size_t len = strlen(etag);
    const char *p = inm;

    for (;;) {
        p += strspn(p, " \t,");
        if (*p == '\0')
            return 0;
        if (*p == '*')
            return 1;
        if (strncmp(p, "W/", 2) == 0)
            p += 2;
        if (strncmp(p, etag, len) == 0 &&
            (p[len] == '\0' || p[len] == ',' || p[len] == ' ' ||
             p[len] == '\t'))
            return 1;
        p += strcspn(p, ",");
    }
}

int sp_serve_racy(const struct stat *sb, const struct timespec *opened)
{
    long long mtime = (long long)sb->st_mtim.tv_sec * 1000000000LL +
                      sb->st_mtim.tv_nsec;
    long long open = (long long)opened->tv_sec * 1000000000LL +
                     opened->tv_nsec;

    return mtime > open - SP_RACY_NS;
}

int sp_serve_not_modified(const char *inm, const char *ims, const char *etag,
                          time_t mtime, time_t now)
{
    struct tm tm;
    const char *end;
    time_t since;

    if (inm != NULL)
        return lists_tag(inm, etag);
    if (ims == NULL)
        return 0;
    memset(&tm, 0, sizeof tm);
    end = strptime(ims, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (end == NULL || *end != '\0')
        return 0;
    since = timegm(&tm);
    return since >= mtime && since <= now;
}

void sp_serve_http_date(time_t t, char *out)
{
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(out, 32, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}
