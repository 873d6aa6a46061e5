/* filter.h: the filters, one row each (sp_filters[], filter.c), as
 * netpbm's pamscale keeps its filters: the name --filter and the reports
 * say, its support, the span of source rows an output row reads, the
 * scratch its rows need, and the row function.  The plan asks a row for
 * its spans (the bands a row source must hand), the items for its rows;
 * neither knows which filter it holds.  A new filter is one file (its
 * row and row function) and one entry in the table; docs/design.md,
 * "Adding a filter", walks through it. */
#ifndef SP_FILTER_H
#define SP_FILTER_H

#include <stddef.h>

#include "image.h"

/* What a filter's rows are made for: IN_WIDTH x IN_HEIGHT source pixels
 * to OUT_WIDTH x OUT_HEIGHT, by FACTOR (scale.h's, N <= -2 for a reduce
 * by N; 1 for a scale to any size). */
struct sp_scaling {
    size_t in_width, in_height;
    size_t out_width, out_height;
    int factor;
};

struct sp_filter_row {
    const char *name;   /* --filter's word, the reports' */
    /* support: the filter's radius in output pixels (pamscale's): a
     * sampled pixel 0, an average over each output pixel's cell 0.5.  An
     * output row reads the source rows within SUPPORT output rows of its
     * centre, so at least 2 x SUPPORT x IN/OUT of them. */
    double support;
    int by_factor;      /* --filter names it for -s N; 0: a fit's */
    int enlarges;       /* -s N >= 2 may name it (an enlarge copies each
                           pixel, whatever the filter); 0: refused */
    int shrinks;        /* a decoder's shrink-on-load may do part of a
                           reduce (an average; header.h) */
    /* span: the source rows [*S0, *S1) that output row Y of S reads:
     * what the row source hands rows() for it, and no more. */
    void (*span)(const struct sp_scaling *s, size_t y, size_t *s0,
                 size_t *s1);
    /* span_max: the most rows any output row's span holds. */
    size_t (*span_max)(const struct sp_scaling *s);
    /* scratch: the bytes of scratch rows() needs (16-byte aligned), for
     * a source of SRC's type. */
    size_t (*scratch)(const struct sp_image *src, const struct sp_scaling *s);
    /* type: the output's type for a source of SRC's type, into OUT (its
     * width and height are the caller's). */
    void (*type)(const struct sp_image *src, const struct sp_scaling *s,
                 struct sp_image *out);
    /* rows: output rows [Y0, Y1) of S into OUT (packed rows of type()'s
     * type), from BAND, source rows [BAND_Y0, BAND_Y0 + band->height) of
     * S's in_width, which hold the spans of Y0 to Y1 - 1.  Reads nothing
     * else, writes nothing but OUT and SCRATCH (scratch() bytes), and
     * allocates nothing: a jump out of it (the SIGBUS guard) leaks
     * nothing, and bands of rows may run on threads. */
    void (*rows)(const struct sp_image *band, size_t band_y0,
                 const struct sp_scaling *s, size_t y0, size_t y1,
                 void *scratch, unsigned char *out);
};

/* The rows, and how many: a job names its filter by its row (a
 * pointer), never by an index or a constant of its own, so a row is all
 * a filter adds.  The first is a job's default (sample). */
extern const struct sp_filter_row *const sp_filters[];
extern const size_t sp_nfilters;

/* The rows themselves, each in its kernel's file: scale.c's sample and
 * box reduce by a whole factor (-s N, N <= -2); resample.c's area, the
 * area average, scales any size to any size (--fit). */
extern const struct sp_filter_row sp_filter_sample, sp_filter_box,
    sp_filter_area;

/* sp_filter_of: the filter a job whose field holds F scales by: F, or
 * for NULL (a job's zero) the table's first row, sample.  Inline: the
 * items ask it row by row, as cheaply as the index they read before. */
static inline const struct sp_filter_row *
sp_filter_of(const struct sp_filter_row *f)
{
    return f != NULL ? f : sp_filters[0];
}

/* sp_filter_named: the row --filter NAME asks for (one by_factor), or
 * NULL when none is. */
const struct sp_filter_row *sp_filter_named(const char *name);

#endif
