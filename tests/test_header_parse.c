/* test_header_parse.c: the header parser on good and bad headers, through
 * sp_header_parse() and through sp_load(); huge headers allocate
 * nothing. */
#include "header_lib.h"

#include "decode.h"

struct good {
    const char *text;      /* the whole header */
    char magic;
    size_t w, h;
    unsigned channels, sample_size, maxval;
};

static const struct good goods[] = {
    {"P6\n3 2\n255\n", '6', 3, 2, 3, 1, 255},
    {"P5\n3 2\n255\n", '5', 3, 2, 1, 1, 255},
    {"P5 3 2 255 ", '5', 3, 2, 1, 1, 255},
    /* a comment right after the magic, between numbers, before maxval */
    {"P6# right after the magic\n3 2\n255\n", '6', 3, 2, 3, 1, 255},
    {"P6\n# a line of its own\n3 # after width\n2\n255\n", '6', 3, 2, 3, 1,
     255},
    {"P5\n3 2\n# before maxval\n255\n", '5', 3, 2, 1, 1, 255},
    {"P5\n3 2#no space before\n255\n", '5', 3, 2, 1, 1, 255},
    {"P5\n#\n#\n3 2\n#\n255\n", '5', 3, 2, 1, 1, 255},
    {"P5\n3 2\n# carriage return ends it\r255\n", '5', 3, 2, 1, 1, 255},
    /* Every whitespace kind netpbm knows (blank, TAB, CR, LF), and runs of
     * it.  VT and FF are not whitespace to netpbm (pamfile refuses
     * "P5\v3"), but any one character may end a number. */
    {"P5\t3\t2\t255\t", '5', 3, 2, 1, 1, 255},
    {"P5\r3\r2\r255\r", '5', 3, 2, 1, 1, 255},
    {"P5\n3\v2\f255\v", '5', 3, 2, 1, 1, 255},
    {"P5 3\f2\v255\f", '5', 3, 2, 1, 1, 255},
    {"P5\r\n3 \t\r\n 2\n\n\n255\r", '5', 3, 2, 1, 1, 255},
    {"P5\r\n\t \r\n3\t\t2 \r\n255\n", '5', 3, 2, 1, 1, 255},
    {"P6  \n\n  17    1\n 255\n", '6', 17, 1, 3, 1, 255},
    /* the ends of the maxval range and the 8/16-bit boundary */
    {"P5\n1 1\n1\n", '5', 1, 1, 1, 1, 1},
    {"P5\n1 1\n255\n", '5', 1, 1, 1, 1, 255},
    {"P5\n1 1\n256\n", '5', 1, 1, 1, 2, 256},
    {"P6\n2 3\n65535\n", '6', 2, 3, 3, 2, 65535},
    {"P5\n2 3\n0065535\n", '5', 2, 3, 1, 2, 65535},
    {"P5\n0003 02\n255\n", '5', 3, 2, 1, 1, 255},
    /* plain formats */
    {"P2\n4 1\n15\n", '2', 4, 1, 1, 1, 15},
    {"P3\n1 4\n1000\n", '3', 1, 4, 3, 2, 1000},
    /* PBM: a bit a pixel, maxval 1; PAM of any depth */
    {"P4\n8 1\n", '4', 8, 1, 1, 1, 1},
    {"P4\n9 2\n", '4', 9, 2, 1, 1, 1},
    {"P1\n3 1\n", '1', 3, 1, 1, 1, 1},
    {"P7\nWIDTH 3\nHEIGHT 2\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\n"
     "ENDHDR\n", '7', 3, 2, 4, 1, 255},
    {"P7\nWIDTH 1\nHEIGHT 1\nDEPTH 5\nMAXVAL 1000\nENDHDR\n", '7', 1, 1,
     5, 2, 1000},
};

START_TEST(test_good_headers)
{
    const struct good *g = &goods[_i];
    struct sp_header hdr;
    char why[SP_WHY_MAX];
    sp_status st = parse_text(g->text, &hdr, why);

    ck_assert_msg(st == SP_OK, "'%s': %d %s (%s)", g->text, st,
                  sp_strerror(st), why);
    ck_assert_int_eq(hdr.magic, g->magic);
    ck_assert_int_eq(hdr.plain, g->magic >= '1' && g->magic <= '3');
    ck_assert_int_eq(hdr.packed, g->magic == '1' || g->magic == '4');
    ck_assert_uint_eq(hdr.width, g->w);
    ck_assert_uint_eq(hdr.height, g->h);
    ck_assert_uint_eq(hdr.channels, g->channels);
    ck_assert_uint_eq(hdr.sample_size, g->sample_size);
    ck_assert_uint_eq(hdr.maxval, g->maxval);
    /* Exactly one whitespace character follows maxval. */
    ck_assert_int_eq(hdr.raster_offset, (off_t)strlen(g->text));
    ck_assert_uint_eq(hdr.raster_bytes,
                      hdr.packed ? (g->w + 7) / 8 * g->h
                                 : g->w * g->h * g->channels * g->sample_size);
    ck_assert_int_eq(hdr.alpha, strstr(g->text, "_ALPHA") != NULL);
}
END_TEST

/* A good header also loads, by both paths, with the raster where the
 * header says it starts (the raster's first byte looks like whitespace or
 * a comment character on purpose). */
START_TEST(test_good_headers_load)
{
    static const unsigned char first[] = {'\n', '#', ' ', '7'};
    const struct good *g = &goods[_i];
    size_t hl = strlen(g->text);
    int packed = g->magic == '4';
    size_t n = packed ? (g->w + 7) / 8 * g->h
                      : g->w * g->h * g->channels * g->sample_size;
    unsigned char *file;
    struct sp_image img;
    struct sp_load_info info;
    const char *path = fx_path("g.pnm");

    if (g->magic >= '1' && g->magic <= '3')
        return;  /* the plain rasters have tests of their own */
    file = malloc(hl + n);
    ck_assert_ptr_nonnull(file);
    memcpy(file, g->text, hl);
    for (size_t i = 0; i < n; i++)
        file[hl + i] = i < sizeof first ? first[i] : (unsigned char)(i * 7);
    if (g->sample_size == 2)  /* keep every sample <= maxval */
        for (size_t i = 0; i < n; i += 2)
            file[hl + i] = 0;
    fx_write_file(path, file, hl + n);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];

        ck_assert_int_eq(sp_load(path, io, &img, &info), SP_OK);
        ck_assert_int_eq(info.raster_offset, (off_t)hl);
        ck_assert_uint_eq(img.width, g->w);
        ck_assert_uint_eq(img.height, g->h);
        fx_in_memory(&img);
        ck_assert_mem_eq(img.pixels, file + hl, n);
        ck_assert_uint_eq(info.trailing_bytes, 0);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
    }
    free(file);
}
END_TEST

struct bad {
    const char *text;
    sp_status st;
    const char *why;       /* a word the detail must contain, or NULL */
};

/* Each bad header and the status it must give: the parser's own checks
 * come first, and libnetpbm's (zero sizes, maxval range, numbers too
 * large for an int) give SP_E_BADHEADER with libnetpbm's words. */
static const struct bad bads[] = {
    {"", SP_E_EMPTY, NULL},
    {"X", SP_E_NOTPNM, NULL},
    {"P", SP_E_NOTPNM, NULL},
    {"p6\n1 1\n255\n", SP_E_NOTPNM, NULL},
    {"P0\n1 1\n255\n", SP_E_NOTPNM, NULL},
    {"P8\n1 1\n255\n", SP_E_NOTPNM, NULL},
    {"PX\n1 1\n255\n", SP_E_NOTPNM, NULL},
    {" P6\n1 1\n255\n", SP_E_NOTPNM, NULL},
    {"\x89PNG\r\n\x1a\n", SP_E_NOTPNM, NULL},
    {"\xff\xd8\xff\xe0", SP_E_NOTPNM, NULL},
    {"BM", SP_E_NOTPNM, NULL},
    {"P7\nWIDTH 1\nHEIGHT 1\nDEPTH 0\nMAXVAL 255\nENDHDR\n",
     SP_E_BADHEADER, NULL},
    {"P7\nWIDTH 1\nHEIGHT 1\nDEPTH 3\nMAXVAL 255\n", SP_E_BADHEADER, NULL},
    {"P4\n0 1\n", SP_E_BADHEADER, NULL},
    {"P5\n0 2\n255\nAB", SP_E_BADHEADER, "zero"},
    {"P5\n2 0\n255\nAB", SP_E_BADHEADER, "zero"},
    {"P6\n0 0\n255\n", SP_E_BADHEADER, "zero"},
    {"P2\n0 1\n255\n", SP_E_BADHEADER, "zero"},
    {"P5\n1 1\n0\nA", SP_E_BADHEADER, "maxval"},
    {"P6\n1 1\n65536\nABCDEF", SP_E_BADHEADER, "maxval"},
    {"P5\n1 1\n4294967296\nA", SP_E_BADHEADER, NULL},
    {"P5\n2147483648 1\n255\nA", SP_E_BADHEADER, "too large"},
    {"P5\n1 2147483648\n255\nA", SP_E_BADHEADER, "too large"},
    {"P5\n4000000000 4000000000\n255\n", SP_E_BADHEADER, "too large"},
    {"P6\n99999999999999999999 1\n255\n", SP_E_BADHEADER, "too large"},
    {"P5\n-1 1\n255\nA", SP_E_BADHEADER, NULL},
    {"P5\v3 2 255\nABCDEF", SP_E_BADHEADER, NULL},
    {"P5\n3 2\n\f255\nABCDEF", SP_E_BADHEADER, NULL},
    {"P5\nx 1\n255\nA", SP_E_BADHEADER, NULL},
    {"P5\n1 1\n+255\nA", SP_E_BADHEADER, NULL},
    {"P5\n", SP_E_BADHEADER, NULL},
    {"P5\n3", SP_E_BADHEADER, NULL},
    {"P5\n3 2", SP_E_BADHEADER, NULL},
    {"P5\n3 2\n", SP_E_BADHEADER, NULL},
    {"P5\n3 2\n255", SP_E_BADHEADER, NULL},
    {"P5\n3 2\n# a comment that never ends", SP_E_BADHEADER, NULL},
};

static void check_bad(const struct bad *b, sp_status st, const char *why,
                      const char *how, int load)
{
    /* a load decodes a JPEG's or PNG's magic: these are cut short */
    const struct sp_codec *codec =
        sp_decode_sniff((const unsigned char *)b->text, strlen(b->text));
    sp_status want = load && codec != NULL && codec->ops != NULL
                         ? SP_E_TRUNCATED
                         : b->st;

    ck_assert_msg(st == want, "%s '%s': got %d (%s) '%s', want %d (%s)", how,
                  b->text, st, sp_strerror(st), why, want,
                  sp_strerror(want));
    if (b->why != NULL)
        ck_assert_msg(strstr(why, b->why) != NULL,
                      "%s '%s': detail '%s' lacks '%s'", how, b->text, why,
                      b->why);
    ck_assert_uint_lt(strlen(why), SP_WHY_MAX);
}

START_TEST(test_bad_headers)
{
    const struct bad *b = &bads[_i];
    struct sp_header hdr;
    struct sp_load_info info;
    char why[SP_WHY_MAX];
    sp_status st = parse_text(b->text, &hdr, why);

    check_bad(b, st, why, "parse", 0);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];

        st = load_bytes(b->text, strlen(b->text), io, &info);
        check_bad(b, st, info.why, sp_io_name(io), 1);
    }
}
END_TEST

/* libnetpbm's exit() is contained: error after error, the process goes on
 * and the parser still works (its jump buffer is restored each time). */
START_TEST(test_errors_never_exit)
{
    struct sp_header hdr;
    char why[SP_WHY_MAX];

    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++)
            ck_assert_int_eq(parse_text(bads[i].text, &hdr, why),
                             bads[i].st);
        ck_assert_int_eq(parse_text("P6\n3 2\n255\n", &hdr, why), SP_OK);
        ck_assert_uint_eq(hdr.width, 3);
        ck_assert_int_eq(load_text("P2\n2 1\n3\n1 9\n", SP_IO_READ),
                         SP_E_BADRASTER);
        ck_assert_int_eq(load_text("P2\n2 1\n3\n1 3\n", SP_IO_READ), SP_OK);
    }
}
END_TEST

/* A header that promises far more than the file holds is refused before
 * anything of that size is allocated or mapped: run under an address-space
 * limit of a few megabytes above what the test already uses. */
static const char *const huge[] = {
    "P6\n100000 100000\n255\n",
    "P5\n100000 100000\n65535\n",
    "P6\n80000000 2000000000\n65535\n",
    "P3\n100000 100000\n255\n1 2 3\n",
    "P2\n100000 100000\n65535\n1 2 3 4 5 6 7 8 9 10\n",
    "P6\n60000 60000\n255\nABCDEFGHIJKL",
};

START_TEST(test_huge_header_no_alloc)
{
    struct sp_load_info info;
    struct sp_image img;
    const char *text = huge[_i];
    char path[64];
    sp_status st;
    int fds[2];

    fx_limit_as((size_t)64 << 20);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];

        st = load_bytes(text, strlen(text), io, &info);
        ck_assert_msg(st == SP_E_TRUNCATED || st == SP_E_TOOBIG,
                      "'%s': %d %s (%s)", text, st, sp_strerror(st),
                      info.why);
    }
    /* And as a stream: the few bytes fit in the pipe's buffer. */
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
    close(fds[1]);
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    st = sp_load(path, SP_IO_MMAP, &img, &info);
    close(fds[0]);
    ck_assert_msg(st == SP_E_TRUNCATED || st == SP_E_TOOBIG,
                  "'%s' by pipe: %d %s (%s)", text, st, sp_strerror(st),
                  info.why);
    ck_assert_ptr_null(img.base);
}
END_TEST

/* Truncated rasters, binary and plain. */
START_TEST(test_truncated)
{
    static const char *const texts[] = {
        "P5\n2 2\n255\nABC",
        "P6\n2 2\n255\nABCDEFGHIJK",
        "P5\n2 1\n65535\nABC",
        "P6\n1 1\n65535\nABCDE",
        "P5\n1 1\n255\n",
        "P6\n1000 1000\n255\n",
        "P2\n4 1\n255\n1 2",
        "P3\n2 1\n255\n1 2 3\n",
    };
    struct sp_load_info info;

    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];
            sp_status st = load_bytes(texts[i], strlen(texts[i]), io, &info);
            ck_assert_msg(st == SP_E_TRUNCATED, "'%s' by %s: %d %s",
                          texts[i], sp_io_name(io), st, sp_strerror(st));
            ck_assert_msg(info.why[0] != '\0', "'%s': no detail", texts[i]);
        }
    }
}
END_TEST

/* Plain rasters: malformed samples. */
START_TEST(test_bad_plain_raster)
{
    static const char *const texts[] = {
        "P2\n2 1\n10\n5 11\n",
        "P2\n2 1\n10\n5 x\n",
        "P2\n2 1\n10\n5 -1\n",
        "P3\n1 1\n255\n1 256 3\n",
        "P2\n1 1\n1\n2\n",
        "P2\n2 2\n65535\n1 2 3 65536\n",
        "P2\n3 1\n255\n1 2 3",  /* netpbm too wants a byte after the last */
    };
    struct sp_load_info info;

    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];
            sp_status st = load_bytes(texts[i], strlen(texts[i]), io, &info);
            ck_assert_msg(st == SP_E_BADRASTER, "'%s': %d %s (%s)", texts[i],
                          st, sp_strerror(st), info.why);
        }
    }
}
END_TEST

/* A stream of bytes in memory whose every read leaves its stack dirty:
 * libnetpbm's PAM line buffer is made on the stack where these reads ran
 * (its magic number is read just before). */
struct dirty {
    const char *p;
    size_t len, pos;
};

/* Not instrumented: AddressSanitizer may put an instrumented function's
 * locals on a stack of its own. */
__attribute__((no_sanitize("address")))
static ssize_t dirty_read(void *cookie, char *buf, size_t len)
{
    struct dirty *d = cookie;
    volatile char junk[16384];
    size_t n = d->len - d->pos < len ? d->len - d->pos : len;

    memset((char *)junk, 'Z', sizeof junk);
    memcpy(buf, d->p + d->pos, n);
    d->pos += n;
    return (ssize_t)n + junk[n % sizeof junk] - 'Z';
}

static int dirty_seek(void *cookie, off64_t *off, int whence)
{
    struct dirty *d = cookie;

    ck_assert(whence == SEEK_SET || whence == SEEK_CUR);
    d->pos = (size_t)*off + (whence == SEEK_CUR ? d->pos : 0);
    *off = (off64_t)d->pos;
    return 0;
}

/* A PAM header line of exactly 254 bytes (a tuple type, a comment, a
 * blank line, the rest of a longer comment: libnetpbm reads 255 bytes at
 * most at a time),
 * which libnetpbm reads on past its buffer's end for: parsed as it says,
 * whatever its stack held, its raster where it is. */
START_TEST(test_pam_line_254)
{
    static const cookie_io_functions_t io = {.read = dirty_read,
                                             .seek = dirty_seek};
    char type[245], text[2048];
    struct sp_header hdr;
    char why[SP_WHY_MAX];
    struct dirty d;
    sp_status st;
    int len;
    FILE *f;

    memset(type, 'A', sizeof type - 1);
    type[sizeof type - 1] = '\0';
    /* "TUPLTYPE " and 244 characters and a newline; a comment of 253
     * characters; 253 blanks; a comment's second 254 bytes */
    len = snprintf(text, sizeof text,
                   "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n"
                   "TUPLTYPE %s\n#%252s\n%253s\n#%254s#%252s\nENDHDR\nAB",
                   type, "c", "", "", "");
    ck_assert_int_lt(len, (int)sizeof text);
    d = (struct dirty){text, (size_t)len, 0};
    f = fopencookie(&d, "rb", io);
    ck_assert_ptr_nonnull(f);
    st = sp_header_parse(f, &hdr, why);
    fclose(f);
    ck_assert_msg(st == SP_OK, "%d %s (%s)", st, sp_strerror(st), why);
    ck_assert_str_eq(hdr.tuple_type, type);
    ck_assert_uint_eq(hdr.width, 2);
    ck_assert_int_eq(hdr.raster_offset, len - 2);
}
END_TEST

static Suite *header_parse_suite(void)
{
    Suite *s = suite_create("header_parse");
    TCase *tc = fx_tcase("parse");
    tcase_add_loop_test(tc, test_good_headers, 0,
                        sizeof goods / sizeof goods[0]);
    tcase_add_loop_test(tc, test_good_headers_load, 0,
                        sizeof goods / sizeof goods[0]);
    tcase_add_loop_test(tc, test_bad_headers, 0,
                        sizeof bads / sizeof bads[0]);
    tcase_add_test(tc, test_errors_never_exit);
    tcase_add_loop_test(tc, test_huge_header_no_alloc, 0,
                        sizeof huge / sizeof huge[0]);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_bad_plain_raster);
    tcase_add_test(tc, test_pam_line_254);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(header_parse_suite());
}
