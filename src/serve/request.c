/* A request's options, and the HTTP validators of its answer
 * (request.h). */
#include "request.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "resample.h"

/* The outputs a request may ask for, by extension: their media types,
 * formats and PNM types. */
static const struct {
    const char *ext, *type;
    enum sp_outfmt fmt;
    enum sp_want pnm_type;
} formats[] = {
    {"pnm", "image/x-portable-anymap", SP_OUT_PNM, SP_WANT_KEEP},
    {"ppm", "image/x-portable-pixmap", SP_OUT_PNM, SP_WANT_PPM},
    {"pgm", "image/x-portable-graymap", SP_OUT_PNM, SP_WANT_PGM},
    {"pbm", "image/x-portable-bitmap", SP_OUT_PNM, SP_WANT_PBM},
    {"pam", "image/x-portable-arbitrarymap", SP_OUT_PNM, SP_WANT_PAM},
    {"png", "image/png", SP_OUT_PNG, SP_WANT_KEEP},
    {"jpg", "image/jpeg", SP_OUT_JPEG, SP_WANT_KEEP},
    {"jpeg", "image/jpeg", SP_OUT_JPEG, SP_WANT_KEEP},
    {"bmp", "image/bmp", SP_OUT_BMP, SP_WANT_KEEP},
    {"tga", "image/x-tga", SP_OUT_TGA, SP_WANT_KEEP},
};
#define NFORMATS (sizeof formats / sizeof *formats)

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
    ask->filter = SP_FILTER_SAMPLE;
    ask->ext = "pnm";
    ask->io = SP_IO_AUTO;
    ask->compression = -1;
}

/* parse_int: all of S, decimal digits with an optional leading '-', in
 * [LO, HI], into *OUT: 0 or -1. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    long v;

    if (!(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* set_choice: VALUE as one of NAMES (N) into *OUT, its index: 0 or -1. */
static int set_choice(const char *value, const char *const *names, int n,
                      int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(value, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

static sp_status set_format(struct sp_serve_ask *ask, const char *value)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcasecmp(value, formats[i].ext) == 0) {
            ask->ext = formats[i].ext;
            ask->fmt = formats[i].fmt;
            ask->pnm_type = formats[i].pnm_type;
            return SP_OK;
        }
    return EINVAL;
}

/* parse_side: the LEN bytes at S, all digits, as a side of 1 to
 * SP_RESAMPLE_MAX pixels into *OUT (the command line's --fit, --width and
 * --height): 0 or -1.  Ten digits at most, so that the sum cannot wrap. */
static int parse_side(const char *s, size_t len, size_t *out)
{
    char digits[11];
    unsigned long long v;

    if (len == 0 || len > 10 || strspn(s, "0123456789") < len)
        return -1;
    memcpy(digits, s, len);
    digits[len] = '\0';
    v = strtoull(digits, NULL, 10);
    if (v < 1 || v > SP_RESAMPLE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* set_fit: fit=WxH into FIT: 0 or -1. */
static int set_fit(struct sp_fit *fit, const char *value)
{
    const char *x = strchr(value, 'x');

    return x == NULL ||
                   parse_side(value, (size_t)(x - value), &fit->width) ||
                   parse_side(x + 1, strlen(x + 1), &fit->height)
               ? -1
               : 0;
}

/* The keys a query may hold, in the order set_value() numbers them. */
static const char *const keys[] = {"s",     "filter",  "format",
                                   "quality", "io",    "fit",
                                   "width", "height",  "enlarge",
                                   "compression", "subsample"};
enum { K_S, K_FILTER, K_FORMAT, K_QUALITY, K_IO, K_FIT, K_WIDTH, K_HEIGHT,
       K_ENLARGE, K_COMPRESSION, K_SUBSAMPLE, NKEYS };

/* What each key's value must be, in the order of keys[], as the command
 * line's option says it (cli/options.c). */
static const char *const expected[] = {
    "expected a non-zero integer from -65536 to 65536",
    "expected sample or box",
    "expected pnm, ppm, pgm, pbm, pam, png, jpg, jpeg, bmp or tga",
    "expected 1 to 100",
    "expected auto, read, mmap or pread",
    "expected WxH, each 1 to 2147483648 pixels",
    "expected 1 to 2147483648 pixels",
    "expected 1 to 2147483648 pixels",
    "takes no value",
    "expected 0 to 9",
    "expected 444, 422 or 420"};

/* set_choices: the keys whose value is one of a few names: VALUE into
 * ASK for key K: 0 or -1. */
static int set_choices(struct sp_serve_ask *ask, int k, const char *value)
{
    static const char *const filters[] = {"sample", "box"};
    static const char *const ios[] = {"read", "mmap", "pread", "auto"};
    static const char *const subsamples[] = {"444", "422", "420"};
    int v;

    switch (k) {
    case K_FILTER:
        if (set_choice(value, filters, 2, &v) != 0)
            return -1;
        ask->filter = v == 0 ? SP_FILTER_SAMPLE : SP_FILTER_BOX;
        return 0;
    case K_IO:
        if (set_choice(value, ios, 4, &v) != 0)
            return -1;
        ask->io = (enum sp_io)v;
        return 0;
    default:  /* K_SUBSAMPLE */
        if (set_choice(value, subsamples, 3, &v) != 0)
            return -1;
        ask->subsample = v == 0 ? 444 : v == 1 ? 422 : 420;
        return 0;
    }
}

/* set_value: key K's VALUE (not NULL, no escape in it) into ASK: 0 or
 * -1. */
static int set_value(struct sp_serve_ask *ask, int k, const char *value)
{
    switch (k) {
    case K_S:
        ask->have_scale = 1;
        return parse_int(value, -SP_SCALE_MAX, SP_SCALE_MAX, &ask->factor) ||
                       ask->factor == 0
                   ? -1
                   : 0;
    case K_FORMAT:
        return set_format(ask, value) == SP_OK ? 0 : -1;
    case K_QUALITY:
        return parse_int(value, 1, 100, &ask->quality);
    case K_COMPRESSION:
        return parse_int(value, 0, 9, &ask->compression);
    case K_FIT:
        return set_fit(&ask->fit, value);
    case K_WIDTH:
        return parse_side(value, strlen(value), &ask->fit.width);
    case K_HEIGHT:
        return parse_side(value, strlen(value), &ask->fit.height);
    default:
        return set_choices(ask, k, value);
    }
}

sp_status sp_serve_ask_set(struct sp_serve_ask *ask, const char *key,
                           const char *value, int allow_io,
                           const char **why)
{
    int k;

    *why = "an unknown key (s, fit, width, height, enlarge, filter, format, "
           "quality, subsample, compression)";
    if (set_choice(key, keys, NKEYS, &k) != 0 || (k == K_IO && !allow_io))
        return EINVAL;
    *why = "given twice";
    if (ask->seen & 1u << k)
        return EINVAL;
    ask->seen |= 1u << k;
    *why = expected[k];
    if (k == K_ENLARGE) {
        ask->fit.enlarge = 1;
        return value == NULL || value[0] == '\0' ? SP_OK : EINVAL;
    }
    if (value == NULL || strchr(value, '%') != NULL) {
        *why = value == NULL ? "needs a value"
                             : "an escape (%XX): no value needs one";
        return EINVAL;
    }
    return set_value(ask, k, value) == 0 ? SP_OK : EINVAL;
}

sp_status sp_serve_ask_check(const struct sp_serve_ask *ask,
                             const char **why)
{
    const int fit = ask->fit.width != 0 || ask->fit.height != 0;

    *why = "missing s=N (or fit=WxH, width=W, height=H)";
    if (!ask->have_scale && !fit)
        return EINVAL;
    *why = "s= and fit= (width=, height=): one or the other";
    if (ask->have_scale && fit)
        return EINVAL;
    *why = "enlarge is for fit=, width= or height=";
    if (ask->fit.enlarge && !fit)
        return EINVAL;
    *why = "filter=box is for reduces only (s=N with N <= -2)";
    if (ask->filter == SP_FILTER_BOX && ask->factor > 1)
        return EINVAL;
    *why = "quality= and subsample= are for a JPEG output (format=jpeg)";
    if ((ask->quality != 0 || ask->subsample != 0) &&
        strcmp(ask->ext, "jpg") != 0 && strcmp(ask->ext, "jpeg") != 0)
        return EINVAL;
    *why = "compression= is for a PNG output (format=png)";
    if (ask->compression >= 0 && strcmp(ask->ext, "png") != 0)
        return EINVAL;
    return SP_OK;
}

const char *sp_serve_media_type(const char *ext)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(ext, formats[i].ext) == 0)
            return formats[i].type;
    return "application/octet-stream";
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
    char text[384];  /* every field at its longest, and the version */
    int n = snprintf(
        text, sizeof text,
        "%ju:%ju:%jd:%jd.%ld:%jd.%ld|%d:%d:%s:%d:%zux%zu:%d:%d:%d|%s",
        (uintmax_t)sb->st_dev, (uintmax_t)sb->st_ino, (intmax_t)sb->st_size,
        (intmax_t)sb->st_mtim.tv_sec, sb->st_mtim.tv_nsec,
        (intmax_t)sb->st_ctim.tv_sec, sb->st_ctim.tv_nsec, ask->factor,
        (int)ask->filter, ask->ext, ask->quality, ask->fit.width,
        ask->fit.height, ask->fit.enlarge, ask->compression, ask->subsample,
        version);
    uint64_t h = fnv(UINT64_C(0xcbf29ce484222325), text,
                     n < 0 ? 0 : (size_t)n < sizeof text ? (size_t)n
                                                         : sizeof text - 1);

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
