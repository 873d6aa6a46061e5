/* params.h: a job's keys, one table: what a request may ask of a job (the
 * scale or the fit, the filter, the output's format and its encoder's
 * settings, the load path), each key one row read by every front.  The
 * command line's long options (--KEY VALUE) and the server's query keys
 * (KEY=VALUE) are these keys; a value is checked here, once.  A job's
 * canonical form, every key with its effective value, is what a cache
 * hashes (the server's ETag): a key added to the table is in it.
 *
 * How a job is run (its threads, --max-pixels) is not asked by a request
 * but set by the program that runs it: not a key. */
#ifndef SP_PARAMS_H
#define SP_PARAMS_H

#include <stddef.h>

#include "job_types.h"
#include "outfmt.h"
#include "status.h"

/* What a row's value is. */
enum sp_param_type {
    SP_PARAM_INT,     /* a decimal int in [LO, HI] ('-' or a digit first) */
    SP_PARAM_CHOICE,  /* one of NAMES (exact), VALUES' int at its index */
    SP_PARAM_FILTER,  /* a filter's name (exact), of a row of filter.h's
                         table that reduces by a factor: the field its
                         row */
    SP_PARAM_NAME,    /* an extension of a row of outfmt.h's table,
                         case-blind, the table's spelling kept: the
                         format's (struct sp_params' FORMAT) */
    SP_PARAM_SIDE,    /* a side, 1 to SP_RESAMPLE_MAX pixels (a size_t) */
    SP_PARAM_BOX,     /* WxH, two sides (a struct sp_fit's width and
                         height) */
    SP_PARAM_FLAG,    /* no value: the int set to 1 */
    SP_PARAM_COLOR    /* RRGGBB in hex ('#' before it or not), white or
                         black: the int 0xRRGGBB, MARK set */
};

/* Keys only some fronts take (a row's NEEDS, an sp_params' ALLOW). */
#define SP_PARAMS_IO     1u  /* io=: the load path (the server's
                                --allow-io) */
#define SP_PARAMS_DECODE 2u  /* how an input is decoded (the command line
                                only, for now: the server's job is built
                                from fields of its own) */
/* The command line: keys spelled --KEY in messages, a later value
 * replacing an earlier one; without it a query's: KEY=, each once. */
#define SP_PARAMS_CLI    4u

/* SP_PARAMS_ANY: every key, as the command line takes them. */
#define SP_PARAMS_ANY (SP_PARAMS_IO | SP_PARAMS_DECODE | SP_PARAMS_CLI)

/* Where a row's value goes: a field of struct sp_job, or the output's
 * format (struct sp_params' FORMAT, not a job's field: today an output's
 * name gives it). */
#define SP_PARAM_FORMAT ((size_t)-1)

/* One key. */
struct sp_param {
    const char *name;       /* the key: --NAME, NAME= */
    const char *alias;      /* an older spelling taken too, or NULL */
    enum sp_param_type type;
    long lo, hi;            /* INT: the range */
    int nonzero;            /* INT: 0 refused */
    const char *const *names;  /* CHOICE: NULL-terminated (a FILTER's
                                  and a NAME's are their tables':
                                  sp_param_choice) */
    const int *values;      /* CHOICE: the int each name sets */
    size_t field;           /* offsetof(struct sp_job, ...), or
                               SP_PARAM_FORMAT */
    size_t mark;            /* INT: the offset of an int set to 1 with it
                               (compression_set); 0: none */
    const char *def;        /* the default, as a value; NULL: none (the
                               field 0) */
    unsigned needs;         /* SP_PARAMS_*: a front must allow it; 0:
                               every front */
    const char *help;       /* one line */
};

/* The state of a job's keys beside the job they set. */
struct sp_params {
    unsigned allow;         /* SP_PARAMS_*: what this front takes */
    unsigned given;         /* the rows given, bit I for row I */
    const char *format;     /* format=: the output's extension (static,
                               lower case); "pnm", the input's own type,
                               by default */
};

/* SP_PARAMS_WHY_MAX: room for a refusal's phrase. */
#define SP_PARAMS_WHY_MAX 192

/* SP_PARAMS_CANON_MAX: room for a canonical form (every key at its
 * longest); sp_params_canonical says when one would not fit. */
#define SP_PARAMS_CANON_MAX 512

/* sp_params_row: the table's row I (0, 1, ... in the canonical form's
 * order), NULL past the last. */
const struct sp_param *sp_params_row(size_t i);

/* sp_param_choice: the Ith value the row R takes by name (a CHOICE's
 * NAMES, a FILTER's filters, a NAME's extensions, each in its table's
 * order), NULL past the last and for a row that takes no name. */
const char *sp_param_choice(const struct sp_param *r, size_t i);

/* sp_params_init: P for a front that takes ALLOW (SP_PARAMS_*), no key
 * given, and every key's field of JOB at its default (its other fields
 * left as they are). */
void sp_params_init(struct sp_params *p, struct sp_job *job, unsigned allow);

/* sp_params_set: the key KEY (a row's name or alias) with VALUE (NULL:
 * none) into JOB.  A FLAG takes no value (NULL or ""); every other key
 * needs one; a query's value holding an escape ('%') is refused, since
 * no value needs one.  Returns 0, or EINVAL with WHY (SP_PARAMS_WHY_MAX)
 * the phrase saying what is wrong, for the front to show after the key
 * and the value it was given: an unknown key (and the keys known, as
 * this front takes them), a key given twice (a query), no value, or the
 * values the key takes ("expected 1 to 100"). */
sp_status sp_params_set(struct sp_params *p, struct sp_job *job,
                        const char *key, const char *value, char *why);

/* sp_params_message: the one line of a refusal into OUT (LEN bytes):
 * the key as the user spelled it (KEY: "-s", "--scale", "s"), its VALUE
 * (NULL: none) and WHY, sp_params_set's phrase, as P's front writes them:
 * "--quality 'abc': expected 1 to 100", "quality=abc: expected 1 to
 * 100". */
void sp_params_message(const struct sp_params *p, const char *key,
                       const char *value, const char *why, char *out,
                       size_t len);

/* sp_params_given: whether the key NAME (a row's name) was given. */
int sp_params_given(const struct sp_params *p, const char *name);

/* sp_params_check: what the keys ask together: a scale or a fit, not
 * both; enlarge with a fit only; box for reduces only.  Returns 0, or
 * EINVAL with WHY (SP_PARAMS_WHY_MAX) saying which, the keys spelled as
 * the front spells them. */
sp_status sp_params_check(const struct sp_params *p,
                          const struct sp_job *job, char *why);

/* sp_params_suit: whether the encoder's keys given apply to an output of
 * format FMT: each key a format's row lists (outfmt.h's KEYS: quality and
 * subsample JPEG's, compression PNG's) given only for a format that
 * lists it.  OUT
 * names the output in the message (the command line's file, "standard
 * output"); NULL: the format key names it (a query).  Returns 0, or
 * EINVAL with WHY (SP_PARAMS_WHY_MAX) saying which. */
sp_status sp_params_suit(const struct sp_params *p, enum sp_outfmt fmt,
                         const char *out, char *why);

/* sp_params_format: the format P's format key names. */
enum sp_outfmt sp_params_format(const struct sp_params *p);

/* sp_params_canonical: JOB's canonical form into OUT (LEN bytes, NUL
 * ended): every key of the table in its order, as KEY=VALUE joined by
 * '&', each value the effective one (a default written out, a name in
 * the table's spelling), so that the same job gives the same text
 * however its keys were spelled or ordered.  A side or a scale not given
 * is 0.  Returns the text's length; LEN or more: it did not fit (cut). */
size_t sp_params_canonical(const struct sp_params *p,
                           const struct sp_job *job, char *out, size_t len);

#endif
