/* A job's keys (src/job/params.c): every key of the table parsed, a value
 * out of its range refused with the key and the value named, the keys
 * asked together, and the canonical form: stable, independent of the
 * order and the spelling of the keys, and changed by every key. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"
#include "fixtures.h"
#include "params.h"

/* values: two values the row R takes that give different jobs, into A and
 * B (a FLAG's A is NULL: not given). */
static void values(const struct sp_param *r, const char **a, const char **b)
{
    static char lo[24], hi[24];

    switch (r->type) {
    case SP_PARAM_INT:
        snprintf(lo, sizeof lo, "%ld", r->lo);
        snprintf(hi, sizeof hi, "%ld", r->hi);
        *a = lo;
        *b = hi;
        return;
    case SP_PARAM_CHOICE:
    case SP_PARAM_FILTER:
    case SP_PARAM_NAME:
        /* two names that set different values (jpg and jpeg set one) */
        *a = sp_param_choice(r, 0);
        *b = sp_param_choice(r, r->type == SP_PARAM_NAME ? 5 : 1);
        return;
    case SP_PARAM_SIDE:
        *a = "1";
        *b = "2147483648";
        return;
    case SP_PARAM_BOX:
        *a = "1x2";
        *b = "2x1";
        return;
    case SP_PARAM_FLAG:
        *a = NULL;
        *b = "";
        return;
    case SP_PARAM_COLOR:
        *a = "black";
        *b = "#12aBcd";
        return;
    }
    ck_abort_msg("%s: a type this test does not know", r->name);
}

/* bad: a value the row R refuses, or NULL (a FLAG on the command line
 * takes none to refuse). */
static const char *bad(const struct sp_param *r)
{
    static char past[24];

    switch (r->type) {
    case SP_PARAM_INT:
        snprintf(past, sizeof past, "%ld", r->hi + 1);
        return past;
    case SP_PARAM_SIDE:
        return "2147483649";
    case SP_PARAM_BOX:
        return "0x5";
    case SP_PARAM_FLAG:
        return "1";
    default:
        return "nonesuch";
    }
}

/* canon: the canonical form of the keys KV (N pairs) set for a front
 * taking ALLOW, into OUT; the first refusal fails the test. */
static void canon(int n, const char *const *kv, unsigned allow, char *out)
{
    struct sp_params p;
    struct sp_job job;
    char why[SP_PARAMS_WHY_MAX];

    memset(&job, 0, sizeof job);
    sp_params_init(&p, &job, allow);
    for (int i = 0; i < n; i++)
        expect(sp_params_set(&p, &job, kv[2 * i], kv[2 * i + 1], why) ==
                   SP_OK,
               "%s=%s: %s", kv[2 * i], kv[2 * i + 1] ? kv[2 * i + 1] : "",
               why);
    expect(sp_params_canonical(&p, &job, out, SP_PARAMS_CANON_MAX) <
               SP_PARAMS_CANON_MAX,
           "the canonical form does not fit");
}

/* Each key takes its values and sets its field; a value out of its
 * range is refused, the message naming the key and the value. */
START_TEST(test_every_key)
{
    const struct sp_param *r;
    size_t i;

    for (i = 0; (r = sp_params_row(i)) != NULL; i++) {
        struct sp_params p;
        struct sp_job job, before;
        char why[SP_PARAMS_WHY_MAX], line[512];
        const char *a, *b, *v = bad(r);

        values(r, &a, &b);
        memset(&job, 0, sizeof job);
        sp_params_init(&p, &job, SP_PARAMS_ANY);
        expect(!sp_params_given(&p, r->name), "%s given", r->name);
        before = job;
        ck_assert_int_eq(sp_params_set(&p, &job, r->name, b, why), SP_OK);
        expect(sp_params_given(&p, r->name), "%s not given", r->name);
        expect(r->field == SP_PARAM_FORMAT
                   ? strcmp(p.format, b) == 0
                   : memcmp(&job, &before, sizeof job) != 0,
               "%s=%s set nothing", r->name, b);
        if (r->alias != NULL)
            ck_assert_int_eq(sp_params_set(&p, &job, r->alias, b, why),
                             SP_OK);
        ck_assert_int_eq(sp_params_set(&p, &job, r->name, v, why), EINVAL);
        sp_params_message(&p, r->name, v, why, line, sizeof line);
        expect(strstr(line, r->name) != NULL && strstr(line, v) != NULL &&
                   strstr(line, r->type == SP_PARAM_FLAG ? "no value"
                                                         : "expected") !=
                       NULL,
               "%s=%s: '%s'", r->name, v, line);
    }
    ck_assert_uint_ge(i, 12);
}
END_TEST

/* The values at the edges of each range, and past them. */
START_TEST(test_ranges)
{
    const char *ok[][2] = {
        {"scale", "-65536"}, {"scale", "65536"}, {"scale", "-1"},
        {"quality", "1"},    {"quality", "100"}, {"compression", "0"},
        {"compression", "9"}, {"width", "2147483648"}, {"fit", "1x1"},
        {"format", "JPG"},   {"subsample", "444"}, {"io", "pread"},
        {"filter", "box"},   {"enlarge", ""},    {"enlarge", NULL},
    };
    const char *no[][2] = {
        {"scale", "0"},     {"scale", "65537"}, {"scale", "+2"},
        {"scale", " 2"},    {"scale", "2x"},    {"scale", ""},
        {"scale", "-"},     {"scale", NULL},    {"quality", "0"},
        {"quality", "101"}, {"compression", "-1"}, {"compression", "10"},
        {"width", "0"},     {"height", "1e3"},  {"fit", "64"},
        {"fit", "x48"},     {"fit", "64x"},     {"fit", "5X5"},
        {"fit", "-5x5"},    {"fit", "10x10x"},  {"filter", "lanczos"},
        {"filter", "Box"},  {"format", "gif"},  {"format", "x.png"},
        {"subsample", "411"}, {"io", "MMAP"},   {"enlarge", "1"},
        {"nonesuch", "1"},  {"Scale", "2"},
    };
    struct sp_params p;
    struct sp_job job;
    char why[SP_PARAMS_WHY_MAX];

    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        sp_params_init(&p, &job, SP_PARAMS_ANY);
        expect(sp_params_set(&p, &job, ok[i][0], ok[i][1], why) == SP_OK,
               "%s=%s refused: %s", ok[i][0], ok[i][1], why);
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        sp_params_init(&p, &job, SP_PARAMS_ANY);
        expect(sp_params_set(&p, &job, no[i][0], no[i][1], why) == EINVAL,
               "%s=%s taken", no[i][0], no[i][1] ? no[i][1] : "(none)");
    }
    sp_params_init(&p, &job, SP_PARAMS_ANY);
    ck_assert_int_eq(sp_params_set(&p, &job, "format", "JPG", why), SP_OK);
    ck_assert_str_eq(p.format, "jpg");  /* the table's spelling */
    ck_assert_int_eq(sp_params_format(&p), SP_OUT_JPEG);
}
END_TEST

/* A query's keys: each once, io= and no-shrink-on-load only where the
 * front takes them (and the unknown key's phrase lists what it takes),
 * no escape; the command line's: a later value replaces an earlier. */
START_TEST(test_fronts)
{
    struct sp_params p;
    struct sp_job job;
    char why[SP_PARAMS_WHY_MAX];

    sp_params_init(&p, &job, 0);
    ck_assert_int_eq(sp_params_set(&p, &job, "s", "2", why), SP_OK);
    ck_assert_int_eq(sp_params_set(&p, &job, "scale", "3", why), EINVAL);
    ck_assert_str_eq(why, "given twice");
    ck_assert_int_eq(sp_params_set(&p, &job, "io", "mmap", why), EINVAL);
    ck_assert_str_eq(why, "an unknown key (scale, fit, width, height, "
                          "crop, enlarge, filter, orient, format, quality, subsample, "
                          "background, compression)");
    ck_assert_int_eq(sp_params_set(&p, &job, "no-shrink-on-load", NULL,
                                   why),
                     EINVAL);
    ck_assert_int_eq(sp_params_set(&p, &job, "quality", "%35", why), EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "an escape"));
    ck_assert_int_eq(sp_params_set(&p, &job, "filter", NULL, why), EINVAL);
    ck_assert_str_eq(why, "needs a value");
    sp_params_init(&p, &job, SP_PARAMS_IO);
    ck_assert_int_eq(sp_params_set(&p, &job, "io", "mmap", why), SP_OK);
    ck_assert_int_eq(job.io, SP_IO_MMAP);
    sp_params_init(&p, &job, SP_PARAMS_ANY);
    ck_assert_int_eq(sp_params_set(&p, &job, "scale", "2", why), SP_OK);
    ck_assert_int_eq(sp_params_set(&p, &job, "s", "-3", why), SP_OK);
    ck_assert_int_eq(job.factor, -3);
    ck_assert_int_eq(sp_params_set(&p, &job, "fit", "64x48", why), SP_OK);
    ck_assert_int_eq(sp_params_set(&p, &job, "width", "30", why), SP_OK);
    ck_assert_uint_eq(job.fit.width, 30);  /* as --fit then --width */
    ck_assert_uint_eq(job.fit.height, 48);
}
END_TEST

/* What the keys ask together, in each front's spelling. */
START_TEST(test_check)
{
    static const struct {
        const char *kv[6];
        int n;
        const char *why;  /* NULL: taken */
    } cases[] = {
        {{"s", "2"}, 1, NULL},
        {{"fit", "5x5", "enlarge", NULL}, 2, NULL},
        {{"width", "5", "filter", "box"}, 2, NULL},
        {{"s", "-2", "filter", "box"}, 2, NULL},
        {{"filter", "box"}, 1, "missing scale=N (or fit=WxH"},
        {{"s", "2", "fit", "5x5"}, 2, "scale= and fit= (width=, height=)"},
        {{"s", "2", "enlarge", ""}, 2, "enlarge=: for fit="},
        {{"s", "2", "filter", "box"}, 2, "filter=box: for reduces only"},
    };
    struct sp_params p;
    struct sp_job job;
    char why[SP_PARAMS_WHY_MAX];

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sp_params_init(&p, &job, 0);
        memset(&job.fit, 0, sizeof job.fit);
        for (int k = 0; k < cases[i].n; k++)
            ck_assert_int_eq(sp_params_set(&p, &job, cases[i].kv[2 * k],
                                           cases[i].kv[2 * k + 1], why),
                             SP_OK);
        if (cases[i].why == NULL) {
            expect(sp_params_check(&p, &job, why) == SP_OK, "case %zu: %s",
                   i, why);
            continue;
        }
        ck_assert_int_eq(sp_params_check(&p, &job, why), EINVAL);
        expect(strstr(why, cases[i].why) != NULL, "case %zu: '%s'", i, why);
    }
    sp_params_init(&p, &job, SP_PARAMS_ANY);
    ck_assert_int_eq(sp_params_check(&p, &job, why), EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "missing --scale N (or --fit WxH"));
}
END_TEST

/* The encoder's keys apply to their formats only. */
START_TEST(test_suit)
{
    struct sp_params p;
    struct sp_job job;
    char why[SP_PARAMS_WHY_MAX];

    sp_params_init(&p, &job, 0);
    ck_assert_int_eq(sp_params_suit(&p, SP_OUT_PNM, NULL, why), SP_OK);
    ck_assert_int_eq(sp_params_set(&p, &job, "quality", "5", why), SP_OK);
    ck_assert_int_eq(sp_params_suit(&p, SP_OUT_JPEG, NULL, why), SP_OK);
    ck_assert_int_eq(sp_params_suit(&p, SP_OUT_PNG, NULL, why), EINVAL);
    ck_assert_str_eq(why, "quality=: for a JPEG output (.jpg, .jpeg), and "
                          "format=pnm is not one");
    sp_params_init(&p, &job, SP_PARAMS_ANY);
    ck_assert_int_eq(sp_params_set(&p, &job, "compression", "0", why),
                     SP_OK);
    ck_assert_int_eq(sp_params_suit(&p, SP_OUT_PNG, "'a.png'", why), SP_OK);
    ck_assert_int_eq(sp_params_suit(&p, SP_OUT_JPEG, "'a.jpg'", why),
                     EINVAL);
    ck_assert_str_eq(why, "--compression: for a PNG output (.png), and "
                          "'a.jpg' is not one");
}
END_TEST

/* filter= and format= take the names the tables hold, and no list of
 * their own: each filter that reduces by a factor by its row's name, each
 * format by each of its row's extensions. */
START_TEST(test_names_from_tables)
{
    struct sp_params p;
    struct sp_job job;
    char why[SP_PARAMS_WHY_MAX], canon[SP_PARAMS_CANON_MAX], want[64];

    for (size_t i = 0; i < sp_nfilters; i++) {
        const struct sp_filter_row *f = sp_filters[i];

        sp_params_init(&p, &job, 0);
        ck_assert_int_eq(sp_params_set(&p, &job, "filter", f->name, why),
                         f->by_factor ? SP_OK : EINVAL);
        if (!f->by_factor)
            continue;
        ck_assert_ptr_eq(job.filter, f);
        sp_params_canonical(&p, &job, canon, sizeof canon);
        snprintf(want, sizeof want, "&filter=%s&", f->name);
        ck_assert_msg(strstr(canon, want) != NULL, "%s", canon);
    }
    for (size_t i = 0; i < sp_noutfmts; i++)
        for (const struct sp_outext *e = sp_outfmts[i].exts; e->ext != NULL;
             e++) {
            sp_params_init(&p, &job, 0);
            ck_assert_int_eq(sp_params_set(&p, &job, "format", e->ext, why),
                             SP_OK);
            ck_assert_int_eq(sp_params_format(&p), (int)i);
            ck_assert_str_eq(p.format, e->ext);
        }
    ck_assert_int_eq(sp_params_set(&p, &job, "filter", "nonesuch", why),
                     EINVAL);
    ck_assert_str_eq(why, "expected sample or box");
}
END_TEST

/* The canonical form: every key, each at its effective value; the same
 * whatever the order and the spelling; a default given equals it
 * absent. */
START_TEST(test_canonical)
{
    const char *one[] = {"s", "-2", "format", "PNG", "compression", "3"};
    const char *two[] = {"compression", "3", "format", "png", "scale", "-2"};
    const char *dflt[] = {"s", "-2", "format", "png", "compression", "6",
                          "filter", "sample", "io", "auto"};
    const char *none[] = {"s", "-2", "format", "png"};
    char a[SP_PARAMS_CANON_MAX], b[SP_PARAMS_CANON_MAX];

    canon(3, one, 0, a);
    ck_assert_str_eq(a, "scale=-2&fit=0x0&width=0&height=0&crop=none&enlarge=0&"
                        "filter=sample&no-shrink-on-load=0&orient=auto&"
                        "format=png&quality=90&subsample=420&"
                        "background=ffffff&compression=3&io=auto");
    canon(3, two, SP_PARAMS_ANY, b);
    ck_assert_str_eq(a, b);
    canon(5, dflt, SP_PARAMS_IO, a);
    canon(2, none, 0, b);
    ck_assert_str_eq(a, b);
}
END_TEST

/* The longest canonical form fits, every key at its longest value. */
START_TEST(test_canonical_longest)
{
    const char *kv[] = {"scale", "-65536", "fit", "2147483648x2147483648",
                        "width", "2147483648", "height", "2147483648",
                        "enlarge", NULL, "filter", "sample",
                        "no-shrink-on-load", NULL, "format", "jpeg",
                        "quality", "100", "subsample", "444",
                        "compression", "9", "io", "pread"};
    char out[SP_PARAMS_CANON_MAX];

    canon(12, kv, SP_PARAMS_ANY, out);
    ck_assert_uint_lt(strlen(out), SP_PARAMS_CANON_MAX);
}
END_TEST

/* A key added to the table is in the canonical form: for every row, two
 * jobs that differ only in that key's value have different forms. */
START_TEST(test_canonical_every_key)
{
    const struct sp_param *r;

    for (size_t i = 0; (r = sp_params_row(i)) != NULL; i++) {
        const char *a, *b;
        char ca[SP_PARAMS_CANON_MAX], cb[SP_PARAMS_CANON_MAX];

        values(r, &a, &b);
        {
            const char *kv_a[] = {r->name, a}, *kv_b[] = {r->name, b};

            canon(r->type == SP_PARAM_FLAG ? 0 : 1, kv_a, SP_PARAMS_ANY, ca);
            canon(1, kv_b, SP_PARAMS_ANY, cb);
        }
        expect(strcmp(ca, cb) != 0, "%s: %s and %s give one form '%s'",
               r->name, a ? a : "(absent)", b, ca);
        expect(strstr(cb, r->name) != NULL, "%s not in '%s'", r->name, cb);
        if (r->alias != NULL) {
            const char *kv[] = {r->alias, b};

            canon(1, kv, SP_PARAMS_ANY, ca);
            ck_assert_str_eq(ca, cb);
        }
    }
}
END_TEST

static Suite *params_suite(void)
{
    Suite *s = suite_create("params");
    TCase *tc = fx_tcase("params");

    tcase_add_test(tc, test_every_key);
    tcase_add_test(tc, test_ranges);
    tcase_add_test(tc, test_fronts);
    tcase_add_test(tc, test_check);
    tcase_add_test(tc, test_suit);
    tcase_add_test(tc, test_names_from_tables);
    tcase_add_test(tc, test_canonical);
    tcase_add_test(tc, test_canonical_longest);
    tcase_add_test(tc, test_canonical_every_key);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(params_suite());
}
