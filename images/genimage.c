/* genimage: write a PNM test image that makes scaling errors visible.
 *
 * Four bands from top to bottom: colour bars; a smooth colour gradient; a
 * 1-pixel checkerboard beside a smooth grey ramp; a 16-step grey wedge.
 * Over them, 1-pixel lines (a border, a horizontal and a vertical line at a
 * third, both diagonals) in a colour that contrasts with what is beneath.
 * The bytes are a pure function of the size and options, so tests and
 * benchmarks can regenerate an image instead of storing it. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE "usage: genimage [-g] [-m MAXVAL] [-p] [-o FILE] WIDTH HEIGHT"
#define PLAIN_LINE_MAX 70  /* what netpbm's plain writers keep lines under */

struct spec {
    uint64_t w, h;
    unsigned channels;  /* 1 grey, 3 colour */
    uint64_t maxval;
    int plain;
};

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "genimage: %s%s (" USAGE ")\n", what, arg);
    return 2;
}

/* parse_num: all of S as a decimal in [1, HI]. */
static int parse_num(const char *s, uint64_t hi, uint64_t *out)
{
    unsigned long long v;
    char *end;

    if (*s < '0' || *s > '9')  /* strtoull would take a sign or a space */
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* ramp: POS in [0, LEN) mapped onto [0, MAX], rounded. */
static uint64_t ramp(uint64_t pos, uint64_t len, uint64_t max)
{
    return len < 2 ? 0 : (pos * max + (len - 1) / 2) / (len - 1);
}

static int on_line(const struct spec *s, uint64_t x, uint64_t y)
{
    return x == 0 || y == 0 || x == s->w - 1 || y == s->h - 1 ||
           x == s->w / 3 || y == s->h / 3 || x == y || x == s->w - 1 - y;
}

static void pixel(const struct spec *s, uint64_t x, uint64_t y, uint64_t *v)
{
    uint64_t m = s->maxval, rgb[3];
    unsigned bar;

    switch (y * 4 / s->h) {
    case 0:
        /* white, yellow, cyan, green, magenta, red, blue, black: distinct
         * greys too, so the bars survive -g */
        bar = (unsigned)(x * 8 / s->w);
        rgb[0] = bar & 2 ? 0 : m;
        rgb[1] = bar & 4 ? 0 : m;
        rgb[2] = bar & 1 ? 0 : m;
        break;
    case 1:
        rgb[0] = ramp(x, s->w, m);
        rgb[1] = ramp(y, s->h, m);
        rgb[2] = m - rgb[0];
        break;
    case 2:
        /* a box filter turns the checkerboard into the ramp's middle grey;
         * sampling turns it solid */
        if (x < s->w / 2)
            rgb[0] = (x ^ y) & 1 ? m : 0;
        else
            rgb[0] = ramp(x - s->w / 2, s->w - s->w / 2, m);
        rgb[1] = rgb[2] = rgb[0];
        break;
    default:
        rgb[0] = rgb[1] = rgb[2] = (x * 16 / s->w * m + 7) / 15;
        break;
    }
    if (s->channels == 1)
        v[0] = (299 * rgb[0] + 587 * rgb[1] + 114 * rgb[2] + 500) / 1000;
    else
        memcpy(v, rgb, sizeof rgb);
    if (on_line(s, x, y))
        for (unsigned c = 0; c < s->channels; c++)
            v[c] = v[c] > m / 2 ? 0 : m;
}

static int write_binary(FILE *f, const struct spec *s)
{
    unsigned bytes = s->maxval > 255 ? 2 : 1;
    size_t len = (size_t)s->w * s->channels * bytes;
    unsigned char *row = malloc(len), *p;
    uint64_t v[3];
    int rc = 0;

    if (row == NULL)
        return -1;
    for (uint64_t y = 0; y < s->h && rc == 0; y++) {
        p = row;
        for (uint64_t x = 0; x < s->w; x++) {
            pixel(s, x, y, v);
            for (unsigned c = 0; c < s->channels; c++) {
                if (bytes == 2)
                    *p++ = (unsigned char)(v[c] >> 8);
                *p++ = (unsigned char)v[c];
            }
        }
        if (fwrite(row, 1, len, f) != len)
            rc = -1;
    }
    free(row);
    return rc;
}

static int write_plain(FILE *f, const struct spec *s)
{
    char tok[8];
    uint64_t v[3];
    int n, col;

    for (uint64_t y = 0; y < s->h; y++) {
        col = 0;
        for (uint64_t x = 0; x < s->w; x++) {
            pixel(s, x, y, v);
            for (unsigned c = 0; c < s->channels; c++) {
                n = snprintf(tok, sizeof tok, "%u", (unsigned)v[c]);
                if (col > 0) {
                    int wrap = col + 1 + n > PLAIN_LINE_MAX;

                    if (putc(wrap ? '\n' : ' ', f) == EOF)
                        return -1;
                    col = wrap ? 0 : col + 1;
                }
                if (fputs(tok, f) == EOF)
                    return -1;
                col += n;
            }
        }
        if (putc('\n', f) == EOF)
            return -1;
    }
    return 0;
}

static int write_image(FILE *f, const struct spec *s)
{
    char magic = s->channels == 1 ? (s->plain ? '2' : '5')
                                  : (s->plain ? '3' : '6');

    if (fprintf(f, "P%c\n%llu %llu\n%u\n", magic, (unsigned long long)s->w,
                (unsigned long long)s->h, (unsigned)s->maxval) < 0)
        return -1;
    return s->plain ? write_plain(f, s) : write_binary(f, s);
}

int main(int argc, char **argv)
{
    struct spec s = {.channels = 3, .maxval = 255};
    const char *out = "-";
    FILE *f;
    char opt[3] = "-?";
    int c, err;

    opterr = 0;
    while ((c = getopt(argc, argv, ":gm:po:h")) != -1) {
        switch (c) {
        case 'g':
            s.channels = 1;
            break;
        case 'm':
            if (parse_num(optarg, 65535, &s.maxval))
                return usage_error("-m expects 1..65535, not ", optarg);
            break;
        case 'p':
            s.plain = 1;
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            puts(USAGE);
            return 0;
        case ':':
            opt[1] = (char)optopt;
            return usage_error("missing argument to ", opt);
        default:
            opt[1] = (char)optopt;
            return usage_error("unknown option ", opt);
        }
    }
    if (argc - optind != 2)
        return usage_error("expected WIDTH and HEIGHT", "");
    /* INT_MAX: libnetpbm keeps dimensions in an int */
    if (parse_num(argv[optind], INT_MAX, &s.w))
        return usage_error("WIDTH expects 1..2147483647, not ", argv[optind]);
    if (parse_num(argv[optind + 1], INT_MAX, &s.h))
        return usage_error("HEIGHT expects 1..2147483647, not ",
                           argv[optind + 1]);

    f = strcmp(out, "-") == 0 ? stdout : fopen(out, "wb");
    if (f == NULL) {
        fprintf(stderr, "genimage: %s: %s\n", out, strerror(errno));
        return 1;
    }
    err = write_image(f, &s) != 0 ? errno : 0;
    /* fclose flushes: a full disk often shows only here */
    if (fclose(f) != 0 && err == 0)
        err = errno;
    if (err != 0) {
        fprintf(stderr, "genimage: %s: %s\n", out, strerror(err));
        return 1;
    }
    return 0;
}
