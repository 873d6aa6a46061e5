/* The server's request options and validators (src/serve/request.c): the
 * query read as the command line reads its options, the ETag's inputs,
 * and the conditions that answer 304. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fixtures.h"
#include "request.h"

/* ask: the query KEYS[i]=VALUES[i] (N of them) into A; the first
 * refusal's status, or sp_serve_ask_check's. */
static sp_status ask(struct sp_serve_ask *a, int n, const char *const *kv,
                     int allow_io)
{
    const char *why;
    sp_status st;

    sp_serve_ask_init(a);
    for (int i = 0; i < n; i++)
        if ((st = sp_serve_ask_set(a, kv[2 * i], kv[2 * i + 1], allow_io,
                                   &why)) != SP_OK)
            return st;
    return sp_serve_ask_check(a, &why);
}

START_TEST(test_query)
{
    struct sp_serve_ask a;
    const char *ok[] = {"s", "-3", "filter", "box", "format", "JPG",
                        "quality", "40"};
    const char *bad[][2] = {
        {"s", "0"},      {"s", "65537"}, {"s", "+2"},    {"s", " 2"},
        {"s", "2x"},     {"s", ""},      {"s", "%32"},   {"s", NULL},
        {"filter", "lanczos"}, {"format", "gif"}, {"quality", "0"},
        {"quality", "101"}, {"io", "mmap"}, {"S", "2"},  {"size", "2"},
    };
    const char *twice[] = {"s", "2", "s", "2"};
    const char *box_up[] = {"s", "2", "filter", "box"};
    const char *q_png[] = {"s", "2", "format", "png", "quality", "5"};
    const char *io[] = {"s", "2", "io", "pread"};

    ck_assert_int_eq(ask(&a, 4, ok, 0), SP_OK);
    ck_assert_int_eq(a.job.factor, -3);
    ck_assert_ptr_eq(a.job.filter, &sp_filter_box);
    ck_assert_str_eq(a.params.format, "jpg");
    ck_assert_int_eq(a.job.quality, 40);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *kv[] = {"s", "2", bad[i][0], bad[i][1]};
        const char *one[] = {bad[i][0], bad[i][1]};

        expect(ask(&a, strcmp(bad[i][0], "s") == 0 ? 1 : 2,
                   strcmp(bad[i][0], "s") == 0 ? one : kv, 0) == EINVAL,
               "%s=%s taken", bad[i][0], bad[i][1] ? bad[i][1] : "(none)");
    }
    ck_assert_int_eq(ask(&a, 2, twice, 0), EINVAL);
    ck_assert_int_eq(ask(&a, 0, NULL, 0), EINVAL);  /* no s */
    ck_assert_int_eq(ask(&a, 2, box_up, 0), EINVAL);
    ck_assert_int_eq(ask(&a, 3, q_png, 0), EINVAL);
    ck_assert_int_eq(ask(&a, 2, io, 1), SP_OK);
    ck_assert_int_eq(a.job.io, SP_IO_PREAD);
}
END_TEST

/* The options of issue 28: a fit (fit=, width=, height=, enlarge),
 * compression= and subsample=, checked as the command line checks
 * --fit, --width, --height, --enlarge, --compression and --subsample. */
START_TEST(test_query_fit)
{
    struct sp_serve_ask a;
    const char *fit[] = {"fit", "64x48", "enlarge", NULL};
    const char *later[] = {"fit", "64x48", "width", "30"};
    const char *height[] = {"height", "20", "format", "png",
                            "compression", "0"};
    const char *jpeg[] = {"width", "20", "format", "jpeg", "subsample",
                          "444"};
    const char *bad[][2] = {
        {"fit", "64"},   {"fit", "x48"},  {"fit", "64x"},   {"fit", "0x5"},
        {"fit", "5x0"},  {"fit", "-5x5"}, {"fit", "5X5"},   {"width", "0"},
        {"width", "2147483649"},          {"height", "1e3"}, {"height", ""},
        {"enlarge", "1"}, {"compression", "10"}, {"compression", "-1"},
        {"subsample", "411"}, {"subsample", "44"},
    };
    const char *both[] = {"s", "2", "fit", "5x5"};
    const char *enlarge[] = {"s", "2", "enlarge", ""};
    const char *c_jpeg[] = {"fit", "5x5", "format", "jpg", "compression",
                            "5"};
    const char *ss_png[] = {"fit", "5x5", "format", "png", "subsample",
                            "420"};

    ck_assert_int_eq(ask(&a, 2, fit, 0), SP_OK);
    ck_assert_uint_eq(a.job.fit.width, 64);
    ck_assert_uint_eq(a.job.fit.height, 48);
    ck_assert_int_eq(a.job.fit.enlarge, 1);
    ck_assert_int_eq(ask(&a, 2, later, 0), SP_OK);  /* as --fit --width */
    ck_assert_uint_eq(a.job.fit.width, 30);
    ck_assert_uint_eq(a.job.fit.height, 48);
    ck_assert_int_eq(ask(&a, 3, height, 0), SP_OK);
    ck_assert_int_eq(a.job.compression, 0);
    ck_assert_int_eq(ask(&a, 3, jpeg, 0), SP_OK);
    ck_assert_int_eq(a.job.subsample, 444);
    ck_assert_int_eq(a.job.compression, 6);  /* the default, written out */
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *kv[] = {"width", "9", bad[i][0], bad[i][1]};

        if (strcmp(bad[i][0], "width") == 0)
            kv[0] = "height";
        expect(ask(&a, 2, kv, 0) == EINVAL, "%s=%s taken", bad[i][0],
               bad[i][1]);
    }
    ck_assert_int_eq(ask(&a, 2, both, 0), EINVAL);
    ck_assert_int_eq(ask(&a, 2, enlarge, 0), EINVAL);
    ck_assert_int_eq(ask(&a, 3, c_jpeg, 0), EINVAL);
    ck_assert_int_eq(ask(&a, 3, ss_png, 0), EINVAL);
}
END_TEST

/* A refusal's phrase says what is wrong with the pair: the keys known,
 * a key twice, a value missing, or the values the key takes. */
START_TEST(test_query_why)
{
    const char *cases[][3] = {
        {"size", "2", "unknown key (scale, fit, "},
        {"quality", "abc", "expected 1 to 100"},
        {"s", "0", "non-zero integer from -65536 to 65536"},
        {"fit", "10", "expected WxH"},
        {"format", "gif", "png, jpg"},
        {"subsample", "411", "444, 422 or 420"},
        {"compression", "10", "expected 0 to 9"},
        {"enlarge", "1", "takes no value"},
        {"quality", NULL, "needs a value"},
        {"quality", "%35", "an escape"},
    };
    struct sp_serve_ask a;
    const char *why;

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sp_serve_ask_init(&a);
        ck_assert_int_eq(sp_serve_ask_set(&a, cases[i][0], cases[i][1], 0,
                                          &why),
                         EINVAL);
        expect(strstr(why, cases[i][2]) != NULL, "%s=%s: '%s'", cases[i][0],
               cases[i][1] ? cases[i][1] : "(none)", why);
    }
    sp_serve_ask_init(&a);
    ck_assert_int_eq(sp_serve_ask_set(&a, "s", "2", 0, &why), SP_OK);
    ck_assert_int_eq(sp_serve_ask_set(&a, "s", "2", 0, &why), EINVAL);
    ck_assert_str_eq(why, "given twice");
}
END_TEST

/* The pairs of a query, counted as libmicrohttpd splits it. */
START_TEST(test_query_pairs)
{
    ck_assert_uint_eq(sp_serve_query_pairs(""), 0);
    ck_assert_uint_eq(sp_serve_query_pairs("s=2"), 1);
    ck_assert_uint_eq(sp_serve_query_pairs("s=2&format=png"), 2);
    ck_assert_uint_eq(sp_serve_query_pairs("enlarge&&"), 3);
    ck_assert_uint_eq(sp_serve_query_pairs("&"), 2);
}
END_TEST

/* tag: the ETag of the file SB for the query KV (N pairs, each taken as
 * a key the server might take: a future query key is in the tag too),
 * version "v1", into OUT. */
static void tag(const struct stat *sb, int n, const char *const *kv,
                char *out)
{
    struct sp_serve_ask a;
    char why[SP_PARAMS_WHY_MAX];

    sp_serve_ask_init(&a);
    a.params.allow = SP_PARAMS_ANY;
    for (int i = 0; i < n; i++)
        expect(sp_params_set(&a.params, &a.job, kv[2 * i], kv[2 * i + 1],
                             why) == SP_OK,
               "%s: %s", kv[2 * i], why);
    sp_serve_etag(sb, &a, "v1", out);
}

START_TEST(test_etag)
{
    struct sp_serve_ask a;
    struct stat sb, sb2;
    const char *s2[] = {"s", "2"}, *scale2[] = {"scale", "2"};
    const char *s3[] = {"s", "3"};
    const char *png[] = {"s", "2", "format", "png"};
    const char *png_dflt[] = {"format", "PNG", "compression", "6", "s", "2"};
    char t1[SP_ETAG_MAX], t2[SP_ETAG_MAX];

    memset(&sb, 0, sizeof sb);
    sb.st_dev = 1;
    sb.st_ino = 2;
    sb.st_size = 3;
    sb.st_mtim.tv_sec = 4;
    sb.st_mtim.tv_nsec = 5;
    tag(&sb, 1, s2, t1);
    tag(&sb, 1, s2, t2);
    ck_assert_str_eq(t1, t2);
    ck_assert_int_eq(t1[0], '"');
    ck_assert_int_eq(t1[strlen(t1) - 1], '"');
    /* the same job however spelled: one tag */
    tag(&sb, 1, scale2, t2);
    ck_assert_str_eq(t1, t2);
    tag(&sb, 2, png, t1);
    tag(&sb, 3, png_dflt, t2);
    ck_assert_str_eq(t1, t2);
    /* each input of the tag changes it */
    tag(&sb, 1, s2, t1);
    sp_serve_ask_init(&a);
    a.job.factor = 2;
    sp_serve_etag(&sb, &a, "v2", t2);
    ck_assert_str_ne(t1, t2);
    tag(&sb, 1, s3, t2);
    ck_assert_str_ne(t1, t2);
    sb2 = sb;
    sb2.st_mtim.tv_nsec++;
    sp_serve_etag(&sb2, &a, "v1", t2);
    sp_serve_etag(&sb, &a, "v1", t1);
    ck_assert_str_ne(t1, t2);
    sb2 = sb;
    sb2.st_ino++;
    sp_serve_etag(&sb2, &a, "v1", t2);
    ck_assert_str_ne(t1, t2);
    sb2 = sb;
    sb2.st_ctim.tv_nsec++;
    sp_serve_etag(&sb2, &a, "v1", t2);
    ck_assert_str_ne(t1, t2);
}
END_TEST

/* A key added to the table changes the tag: for every key, two requests
 * that differ only in its value have different tags. */
START_TEST(test_etag_every_key)
{
    const struct sp_param *r;
    struct stat sb;

    memset(&sb, 0, sizeof sb);
    sb.st_ino = 7;
    for (size_t i = 0; (r = sp_params_row(i)) != NULL; i++) {
        const char *a, *b;
        char ta[SP_ETAG_MAX], tb[SP_ETAG_MAX], lo[24], hi[24];

        switch (r->type) {
        case SP_PARAM_INT:  /* the ends of its range */
            snprintf(lo, sizeof lo, "%ld", r->lo);
            snprintf(hi, sizeof hi, "%ld", r->hi);
            a = lo;
            b = hi;
            break;
        case SP_PARAM_CHOICE:
        case SP_PARAM_FILTER:
        case SP_PARAM_NAME:
            a = sp_param_choice(r, 0);
            b = sp_param_choice(r, r->type == SP_PARAM_NAME ? 5 : 1);
            break;
        case SP_PARAM_SIDE:
            a = "1";
            b = "2";
            break;
        case SP_PARAM_BOX:
            a = "1x2";
            b = "2x1";
            break;
        case SP_PARAM_COLOR:
            a = "black";
            b = "fafafa";
            break;
        default:  /* SP_PARAM_FLAG: absent, then given */
            a = NULL;
            b = "";
        }
        {
            const char *kv_a[] = {r->name, a}, *kv_b[] = {r->name, b};

            tag(&sb, a != NULL, kv_a, ta);
            tag(&sb, 1, kv_b, tb);
        }
        expect(strcmp(ta, tb) != 0, "%s=%s and %s=%s: one tag %s", r->name,
               a ? a : "(absent)", r->name, b, ta);
    }
}
END_TEST

START_TEST(test_conditions)
{
    const time_t now = 2000000000;  /* 2033: after every date below */
    const char *tag = "\"00ff\"";
    char date[32];

    ck_assert(sp_serve_not_modified("\"00ff\"", NULL, tag, 0, now));
    ck_assert(sp_serve_not_modified("W/\"00ff\"", NULL, tag, 0, now));
    ck_assert(sp_serve_not_modified("\"a\", \"00ff\"", NULL, tag, 0, now));
    ck_assert(sp_serve_not_modified("*", NULL, tag, 0, now));
    ck_assert(!sp_serve_not_modified("\"00f\"", NULL, tag, 0, now));
    ck_assert(!sp_serve_not_modified("\"00ff0\"", NULL, tag, 0, now));
    ck_assert(!sp_serve_not_modified("", NULL, tag, 0, now));
    ck_assert(!sp_serve_not_modified(NULL, NULL, tag, 0, now));
    /* If-None-Match wins over If-Modified-Since */
    sp_serve_http_date(1000000000, date);
    ck_assert_str_eq(date, "Sun, 09 Sep 2001 01:46:40 GMT");
    ck_assert(!sp_serve_not_modified("\"x\"", date, tag, 1000000000, now));
    ck_assert(sp_serve_not_modified(NULL, date, tag, 1000000000, now));
    ck_assert(!sp_serve_not_modified(NULL, date, tag, 1000000001, now));
    ck_assert(!sp_serve_not_modified(NULL, "yesterday", tag, 0, now));
    ck_assert(!sp_serve_not_modified(NULL, "Sun, 09 Sep 2001 01:46:40 GMTx",
                                     tag, 0, now));
    /* a date after the server's clock is ignored (RFC 9110 13.1.3) */
    ck_assert(sp_serve_not_modified(NULL, date, tag, 0, 1000000000));
    ck_assert(!sp_serve_not_modified(NULL, date, tag, 0, 999999999));
}
END_TEST

START_TEST(test_media_types)
{
    ck_assert_str_eq(sp_serve_media_type("png"), "image/png");
    ck_assert_str_eq(sp_serve_media_type("jpg"), "image/jpeg");
    ck_assert_str_eq(sp_serve_media_type("jpeg"), "image/jpeg");
    ck_assert_str_eq(sp_serve_media_type("ppm"), "image/x-portable-pixmap");
    ck_assert_str_eq(sp_serve_media_type("pnm"), "image/x-portable-anymap");
}
END_TEST

/* A stamp vouches for the bytes only once it is SP_RACY_NS older than
 * the open: a write in progress set it as it began. */
START_TEST(test_racy)
{
    struct stat sb;
    struct timespec opened = {1000, 500000000};

    memset(&sb, 0, sizeof sb);
    sb.st_mtim = (struct timespec){997, 0};
    ck_assert(!sp_serve_racy(&sb, &opened));
    sb.st_mtim = (struct timespec){998, 500000000};
    ck_assert(!sp_serve_racy(&sb, &opened));
    sb.st_mtim = (struct timespec){998, 500000001};
    ck_assert(sp_serve_racy(&sb, &opened));
    sb.st_mtim = opened;
    ck_assert(sp_serve_racy(&sb, &opened));
    sb.st_mtim = (struct timespec){2000, 0};  /* in the future */
    ck_assert(sp_serve_racy(&sb, &opened));
}
END_TEST

static Suite *serve_request_suite(void)
{
    Suite *s = suite_create("serve_request");
    TCase *tc = fx_tcase("serve_request");

    tcase_add_test(tc, test_query);
    tcase_add_test(tc, test_query_fit);
    tcase_add_test(tc, test_query_why);
    tcase_add_test(tc, test_query_pairs);
    tcase_add_test(tc, test_etag);
    tcase_add_test(tc, test_etag_every_key);
    tcase_add_test(tc, test_conditions);
    tcase_add_test(tc, test_media_types);
    tcase_add_test(tc, test_racy);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(serve_request_suite());
}
