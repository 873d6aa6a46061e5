/* A job's keys: the table, the parser of KEY=VALUE, the checks of what
 * the keys ask together, and the canonical form (params.h). */
#include "params.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "resample.h"

/* CHOICE rows read and write their field as an int. */
_Static_assert(sizeof(enum sp_io) == sizeof(int), "enum sp_io");

static const char *const ios[] = {"auto", "read", "mmap", "pread", NULL};
static const int io_values[] = {SP_IO_AUTO, SP_IO_READ, SP_IO_MMAP,
                                SP_IO_PREAD};
static const char *const orients[] = {"auto", "none", NULL};
static const char *const crops[] = {"none", "centre", "center", NULL};
static const int crop_values[] = {0, 1, 1};
static const int orient_values[] = {0, 1};
static const char *const subsamples[] = {"444", "422", "420", NULL};
static const int subsample_values[] = {444, 422, 420};

#define FIELD(f) offsetof(struct sp_job, f)

/* The keys, in the canonical form's order. */
static const struct sp_param table[] = {
    {.name = "scale", .alias = "s", .type = SP_PARAM_INT,
     .lo = -SP_SCALE_MAX, .hi = SP_SCALE_MAX, .nonzero = 1,
     .field = FIELD(factor),
     .help = "enlarge N times (N >= 2), or reduce |N| times"},
    {.name = "fit", .type = SP_PARAM_BOX, .field = FIELD(fit),
     .help = "a thumbnail W wide or H high, its aspect kept"},
    {.name = "width", .type = SP_PARAM_SIDE, .field = FIELD(fit.width),
     .help = "a fit N wide, the height from the aspect"},
    {.name = "height", .type = SP_PARAM_SIDE, .field = FIELD(fit.height),
     .help = "a fit N high, the width from the aspect"},
    {.name = "crop", .type = SP_PARAM_CHOICE, .names = crops,
     .values = crop_values, .field = FIELD(fit.crop), .def = "none",
     .help = "fit: fill the box and cut the excess, centred"},
    {.name = "enlarge", .type = SP_PARAM_FLAG, .field = FIELD(fit.enlarge),
     .help = "fit: enlarge an image smaller than the box"},
    {.name = "filter", .type = SP_PARAM_FILTER, .field = FIELD(filter),
     .def = "sample",
     .help = "a reduce samples a pixel a block, or its mean"},
    {.name = "no-shrink-on-load", .type = SP_PARAM_FLAG,
     .field = FIELD(no_shrink), .needs = SP_PARAMS_DECODE,
     .help = "decode every pixel of a JPEG, not 1/2 to 1/8"},
    {.name = "orient", .type = SP_PARAM_CHOICE, .names = orients,
     .values = orient_values, .field = FIELD(no_orient), .def = "auto",
     .help = "turn a photo upright by its EXIF orientation, or keep it "
             "as stored (none)"},
    {.name = "format", .type = SP_PARAM_NAME, .field = SP_PARAM_FORMAT,
     .def = "pnm",
     .help = "the output's format, as an extension"},
    {.name = "quality", .type = SP_PARAM_INT, .lo = 1, .hi = 100,
     .field = FIELD(quality), .def = "90", .help = "JPEG quality"},
    {.name = "subsample", .type = SP_PARAM_CHOICE, .names = subsamples,
     .values = subsample_values, .field = FIELD(subsample), .def = "420",
     .help = "JPEG chroma subsampling"},
    {.name = "background", .type = SP_PARAM_COLOR,
     .field = FIELD(background), .mark = FIELD(background_set),
     .def = "ffffff",
     .help = "the colour under transparent pixels where the output has "
             "no alpha (JPEG, PGM, PPM): RRGGBB, white or black"},
    {.name = "compression", .type = SP_PARAM_INT, .lo = 0, .hi = 9,
     .field = FIELD(compression), .mark = FIELD(compression_set),
     .def = "6", .help = "PNG zlib level"},
    {.name = "io", .type = SP_PARAM_CHOICE, .names = ios,
     .values = io_values, .field = FIELD(io), .def = "auto",
     .needs = SP_PARAMS_IO, .help = "the load path"},
};
#define NROWS (sizeof table / sizeof *table)
_Static_assert(NROWS <= 32, "struct sp_params' GIVEN holds a bit a row");

const struct sp_param *sp_params_row(size_t i)
{
    return i < NROWS ? &table[i] : NULL;
}

/* say: FMT into WHY (SP_PARAMS_WHY_MAX).  Returns EINVAL. */
__attribute__((format(printf, 2, 3)))
static sp_status say(char *why, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, SP_PARAMS_WHY_MAX, fmt, ap);
    va_end(ap);
    return EINVAL;
}

/* spell: the key NAME with the value VALUE (NULL: none) as P's front
 * spells it ("--fit WxH", "fit=WxH"), into a buffer of 40 bytes. */
static const char *spell(const struct sp_params *p, const char *name,
                         const char *value, char *buf)
{
    if (p->allow & SP_PARAMS_CLI)
        snprintf(buf, 40, "--%s%s%s", name, value ? " " : "",
                 value ? value : "");
    else
        snprintf(buf, 40, "%s=%s", name, value ? value : "");
    return buf;
}

/* parse_int: all of S as a decimal int in [LO, HI]: 0 or -1.  strtol
 * alone would take blanks and a '+'. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    long v;

    if (!(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* parse_side: the LEN bytes at S, all digits, as a side of 1 to
 * SP_RESAMPLE_MAX pixels: 0 or -1.  Ten digits at most, so that the sum
 * cannot wrap. */
static int parse_side(const char *s, size_t len, size_t *out)
{
    size_t v = 0;

    if (len == 0 || len > 10)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    if (v < 1 || v > SP_RESAMPLE_MAX)
        return -1;
    *out = v;
    return 0;
}

/* parse_color: S as a colour, 0xRRGGBB: six hex digits, '#' before them
 * or not, or white or black: 0 or -1. */
static int parse_color(const char *s, int *out)
{
    unsigned v = 0;

    if (strcmp(s, "white") == 0 || strcmp(s, "black") == 0) {
        *out = s[0] == 'w' ? 0xffffff : 0;
        return 0;
    }
    s += s[0] == '#';
    if (strlen(s) != 6)
        return -1;
    for (int i = 0; i < 6; i++) {
        int d = s[i] >= '0' && s[i] <= '9'   ? s[i] - '0'
                : s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10
                : s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10
                                             : -1;

        if (d < 0)
            return -1;
        v = v << 4 | (unsigned)d;
    }
    *out = (int)v;
    return 0;
}

const char *sp_param_choice(const struct sp_param *r, size_t i)
{
    switch (r->type) {
    case SP_PARAM_CHOICE:
        for (size_t k = 0; r->names[k] != NULL; k++)
            if (k == i)
                return r->names[k];
        return NULL;
    case SP_PARAM_FILTER:
        for (size_t k = 0; k < sp_nfilters; k++)
            if (sp_filters[k]->by_factor && i-- == 0)
                return sp_filters[k]->name;
        return NULL;
    case SP_PARAM_NAME:
        for (size_t k = 0; k < sp_noutfmts; k++)
            for (const struct sp_outext *e = sp_outfmts[k].exts;
                 e->ext != NULL; e++)
                if (i-- == 0)
                    return e->ext;
        return NULL;
    default:
        return NULL;
    }
}

/* find: the index of VALUE among the row R's names (sp_param_choice;
 * case-blind for a NAME), or -1. */
static int find(const struct sp_param *r, const char *value)
{
    const char *name;

    for (size_t i = 0; (name = sp_param_choice(r, i)) != NULL; i++)
        if ((r->type == SP_PARAM_NAME ? strcasecmp : strcmp)(value,
                                                             name) == 0)
            return (int)i;
    return -1;
}

/* parse: VALUE (not NULL) into the row R's field of JOB or P: 0 or -1. */
static int parse(const struct sp_param *r, struct sp_params *p,
                 struct sp_job *job, const char *value)
{
    char *field = (char *)job + (r->field == SP_PARAM_FORMAT ? 0 : r->field);
    const struct sp_filter_row *f;
    struct sp_fit box;
    const char *x;
    int v, i;

    switch (r->type) {
    case SP_PARAM_INT:
        if (parse_int(value, r->lo, r->hi, &v) != 0 || (r->nonzero && !v))
            return -1;
        memcpy(field, &v, sizeof v);
        if (r->mark != 0)
            memcpy((char *)job + r->mark, &(int){1}, sizeof(int));
        return 0;
    case SP_PARAM_CHOICE:
        if ((i = find(r, value)) < 0)
            return -1;
        memcpy(field, &r->values[i], sizeof(int));
        return 0;
    case SP_PARAM_FILTER:
        if ((f = sp_filter_named(value)) == NULL)
            return -1;
        memcpy(field, &f, sizeof f);
        return 0;
    case SP_PARAM_NAME:
        if ((i = find(r, value)) < 0)
            return -1;
        p->format = sp_param_choice(r, (size_t)i);
        return 0;
    case SP_PARAM_SIDE:
        return parse_side(value, strlen(value), (size_t *)(void *)field);
    case SP_PARAM_BOX:
        x = strchr(value, 'x');
        if (x == NULL || parse_side(value, (size_t)(x - value), &box.width) ||
            parse_side(x + 1, strlen(x + 1), &box.height))
            return -1;
        ((struct sp_fit *)(void *)field)->width = box.width;
        ((struct sp_fit *)(void *)field)->height = box.height;
        return 0;
    case SP_PARAM_COLOR:
        if (parse_color(value, &v) != 0)
            return -1;
        memcpy(field, &v, sizeof v);
        memcpy((char *)job + r->mark, &(int){1}, sizeof(int));
        return 0;
    default:  /* SP_PARAM_FLAG */
        if (value[0] != '\0')
            return -1;
        memcpy(field, &(int){1}, sizeof(int));
        return 0;
    }
}

/* expected: what the row R's value must be, into WHY.  Returns
 * EINVAL. */
static sp_status expected(const struct sp_param *r, char *why)
{
    size_t n = 0;

    switch (r->type) {
    case SP_PARAM_INT:
        if (r->nonzero)
            return say(why, "expected a non-zero integer from %ld to %ld",
                       r->lo, r->hi);
        return say(why, "expected %ld to %ld", r->lo, r->hi);
    case SP_PARAM_SIDE:
        return say(why, "expected 1 to %zu pixels", SP_RESAMPLE_MAX);
    case SP_PARAM_BOX:
        return say(why, "expected WxH, each 1 to %zu pixels",
                   SP_RESAMPLE_MAX);
    case SP_PARAM_FLAG:
        return say(why, "takes no value");
    case SP_PARAM_COLOR:
        return say(why, "expected a colour: RRGGBB in hex, white or black");
    default:  /* CHOICE, FILTER, NAME: "expected a, b or c" */
        n = (size_t)snprintf(why, SP_PARAMS_WHY_MAX, "expected");
        for (size_t i = 0;
             sp_param_choice(r, i) != NULL && n < SP_PARAMS_WHY_MAX; i++)
            n += (size_t)snprintf(why + n, SP_PARAMS_WHY_MAX - n, "%s%s",
                                  i == 0 ? " "
                                  : sp_param_choice(r, i + 1) == NULL
                                      ? " or "
                                      : ", ",
                                  sp_param_choice(r, i));
        return EINVAL;
    }
}

/* row_of: the index of the row KEY names (or is an alias of) that P's
 * front takes, or -1. */
static int row_of(const struct sp_params *p, const char *key)
{
    for (size_t i = 0; i < NROWS; i++)
        if ((table[i].needs & ~p->allow) == 0 &&
            (strcmp(key, table[i].name) == 0 ||
             (table[i].alias != NULL && strcmp(key, table[i].alias) == 0)))
            return (int)i;
    return -1;
}

/* unknown: the phrase for a key P's front does not take, the keys it
 * takes listed, into WHY.  Returns EINVAL. */
static sp_status unknown(const struct sp_params *p, char *why)
{
    size_t n = (size_t)snprintf(why, SP_PARAMS_WHY_MAX, "an unknown key (");
    const char *sep = "";

    for (size_t i = 0; i < NROWS && n < SP_PARAMS_WHY_MAX; i++) {
        if ((table[i].needs & ~p->allow) != 0)
            continue;
        n += (size_t)snprintf(why + n, SP_PARAMS_WHY_MAX - n, "%s%s", sep,
                              table[i].name);
        sep = ", ";
    }
    if (n < SP_PARAMS_WHY_MAX)
        snprintf(why + n, SP_PARAMS_WHY_MAX - n, ")");
    return EINVAL;
}

void sp_params_init(struct sp_params *p, struct sp_job *job, unsigned allow)
{
    p->allow = allow;
    p->given = 0;
    p->format = NULL;
    for (size_t i = 0; i < NROWS; i++) {
        const struct sp_param *r = &table[i];
        char *field = (char *)job + (r->field == SP_PARAM_FORMAT ? 0
                                                                 : r->field);

        if (r->type == SP_PARAM_SIDE)
            memset(field, 0, sizeof(size_t));
        else if (r->type == SP_PARAM_BOX)
            memset(field, 0, 2 * sizeof(size_t));
        else if (r->type == SP_PARAM_FILTER)
            memset(field, 0, sizeof(const struct sp_filter_row *));
        else if (r->type != SP_PARAM_NAME)
            memset(field, 0, sizeof(int));
        if (r->def != NULL && parse(r, p, job, r->def) != 0)
            abort();  /* a default the table's own parser refuses */
    }
}

sp_status sp_params_set(struct sp_params *p, struct sp_job *job,
                        const char *key, const char *value, char *why)
{
    const int cli = (p->allow & SP_PARAMS_CLI) != 0;
    int k = row_of(p, key);
    const struct sp_param *r;

    if (k < 0)
        return unknown(p, why);
    r = &table[k];
    if (!cli && (p->given & 1u << k))
        return say(why, "given twice");
    p->given |= 1u << k;
    if (r->type == SP_PARAM_FLAG && value == NULL)
        value = "";
    if (value == NULL)
        return say(why, "needs a value");
    /* A query's values are taken as sent, no escape decoded. */
    if (!cli && strchr(value, '%') != NULL && r->type != SP_PARAM_FLAG)
        return say(why, "an escape (%%XX): no value needs one");
    return parse(r, p, job, value) == 0 ? SP_OK : expected(r, why);
}

void sp_params_message(const struct sp_params *p, const char *key,
                       const char *value, const char *why, char *out,
                       size_t len)
{
    if (p->allow & SP_PARAMS_CLI)
        snprintf(out, len, "%s '%s': %s", key, value ? value : "", why);
    else
        snprintf(out, len, "%s%s%s: %s", key, value ? "=" : "",
                 value ? value : "", why);
}

int sp_params_given(const struct sp_params *p, const char *name)
{
    for (size_t i = 0; i < NROWS; i++)
        if (strcmp(name, table[i].name) == 0)
            return (p->given & 1u << i) != 0;
    return 0;
}

sp_status sp_params_check(const struct sp_params *p,
                          const struct sp_job *job, char *why)
{
    const int fit = job->fit.width != 0 || job->fit.height != 0;
    const int scale = sp_params_given(p, "scale");
    char a[40], b[40], c[40], d[40];

    if (!scale && !fit)
        return say(why, "missing %s (or %s, %s, %s)",
                   spell(p, "scale", "N", a), spell(p, "fit", "WxH", b),
                   spell(p, "width", "W", c), spell(p, "height", "H", d));
    if (scale && fit)
        return say(why, "%s and %s (%s, %s): one or the other",
                   spell(p, "scale", NULL, a), spell(p, "fit", NULL, b),
                   spell(p, "width", NULL, c), spell(p, "height", NULL, d));
    if (job->fit.crop && (job->fit.width == 0 || job->fit.height == 0))
        return say(why, "%s: for %s with both sides",
                   spell(p, "crop", "centre", a), spell(p, "fit", "WxH", b));
    if (job->fit.enlarge && !fit)
        return say(why, "%s: for %s, %s or %s", spell(p, "enlarge", NULL, a),
                   spell(p, "fit", NULL, b), spell(p, "width", NULL, c),
                   spell(p, "height", NULL, d));
    if (!sp_filter_of(job->filter)->enlarges && job->factor > 1)
        return say(why, "%s: for reduces only (%s with N <= -2); an "
                   "enlarge copies each pixel",
                   spell(p, "filter", sp_filter_of(job->filter)->name, a),
                   spell(p, "scale", "N", b));
    return SP_OK;
}

enum sp_outfmt sp_params_format(const struct sp_params *p)
{
    enum sp_outfmt fmt;

    return sp_outfmt_ext(p->format, &fmt) != NULL ? fmt : SP_OUT_PNM;
}

/* lists: whether the format row F's encoder reads the key KEY. */
static int lists(const struct sp_outfmt_row *f, const char *key)
{
    for (const char *const *k = f->keys; k != NULL && *k != NULL; k++)
        if (strcmp(*k, key) == 0)
            return 1;
    return 0;
}

sp_status sp_params_suit(const struct sp_params *p, enum sp_outfmt fmt,
                         const char *out, char *why)
{
    char a[40], b[48], kind[64];

    if (out == NULL)
        out = spell(p, "format", p->format, b);
    for (size_t i = 0; i < NROWS; i++) {
        const struct sp_outfmt_row *f = NULL;
        size_t n;

        if (!(p->given & 1u << i) || lists(&sp_outfmts[fmt], table[i].name))
            continue;
        for (size_t k = 0; k < sp_noutfmts && f == NULL; k++)
            if (lists(&sp_outfmts[k], table[i].name))
                f = &sp_outfmts[k];
        if (f == NULL)
            continue;  /* not an encoder's key */
        /* "a JPEG output (.jpg, .jpeg)": the format that reads it */
        n = (size_t)snprintf(kind, sizeof kind, "a %s output (", f->name);
        for (const struct sp_outext *e = f->exts;
             e->ext != NULL && n < sizeof kind; e++)
            n += (size_t)snprintf(kind + n, sizeof kind - n, "%s.%s%s",
                                  e == f->exts ? "" : ", ", e->ext,
                                  e[1].ext != NULL ? "" : ")");
        return say(why, "%s: for %s, and %s is not one",
                   spell(p, table[i].name, NULL, a), kind, out);
    }
    return SP_OK;
}

/* value: the row R's effective value in JOB and P, as text, into BUF (48
 * bytes). */
static const char *value(const struct sp_param *r, const struct sp_params *p,
                         const struct sp_job *job, char *buf)
{
    const char *field = (const char *)job + r->field;
    const struct sp_fit *box = (const void *)field;
    size_t side;
    int v;

    switch (r->type) {
    case SP_PARAM_NAME:
        return p->format;
    case SP_PARAM_FILTER:
        return sp_filter_of(*(const struct sp_filter_row *const *)(
                                const void *)field)->name;
    case SP_PARAM_SIDE:
        memcpy(&side, field, sizeof side);
        snprintf(buf, 48, "%zu", side);
        return buf;
    case SP_PARAM_BOX:
        snprintf(buf, 48, "%zux%zu", box->width, box->height);
        return buf;
    case SP_PARAM_COLOR:  /* the default unless given */
        memcpy(&v, (const char *)job + r->mark, sizeof v);
        if (!v)
            return r->def;
        memcpy(&v, field, sizeof v);
        snprintf(buf, 48, "%06x", (unsigned)v);
        return buf;
    default:  /* an int: INT, CHOICE, FLAG */
        memcpy(&v, field, sizeof v);
        if (r->type == SP_PARAM_CHOICE)
            for (int i = 0; r->names[i] != NULL; i++)
                if (r->values[i] == v)
                    return r->names[i];
        snprintf(buf, 48, "%d", v);
        return buf;
    }
}

size_t sp_params_canonical(const struct sp_params *p,
                           const struct sp_job *job, char *out, size_t len)
{
    size_t n = 0;

    if (len > 0)
        out[0] = '\0';
    for (size_t i = 0; i < NROWS; i++) {
        char buf[48];
        int w = snprintf(n < len ? out + n : NULL, n < len ? len - n : 0,
                         "%s%s=%s", i == 0 ? "" : "&", table[i].name,
                         value(&table[i], p, job, buf));

        n += w > 0 ? (size_t)w : 0;
    }
    return n;
}
