/* scaleppm's one-line messages, and the escaping that keeps them one line
 * and keeps the terminal's state out of the reach of names and inputs. */
#include "msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t sp_utf8_char(const unsigned char *p, unsigned long *cp)
{
    size_t n;
    unsigned long c, min;

    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2, c = p[0] & 0x1f, min = 0x80;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3, c = p[0] & 0x0f, min = 0x800;
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4, c = p[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)  /* also stops at the NUL */
            return 0;
        c = c << 6 | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

int sp_char_shown(unsigned long cp)
{
    return !(cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) ||
             (cp >= 0x2066 && cp <= 0x2069));
}

const char *sp_show_name(const char *text, char *buf, size_t len)
{
    static const char plain[] = "\\\n\t\r", named[] = "\\ntr";
    const unsigned char *p = (const unsigned char *)text;
    size_t n = 0;

    if (len == 0)
        return buf;
    while (*p != '\0') {
        char piece[20];  /* at most 3 bytes escaped: 12 */
        size_t k = 0, step = 1;
        unsigned long cp;
        const char *c = strchr(plain, *p);

        if (c != NULL) {
            piece[k++] = '\\';
            piece[k++] = named[c - plain];
        } else if (*p >= 0x20 && *p < 0x7f) {
            piece[k++] = (char)*p;
        } else if (*p >= 0x80 && (step = sp_utf8_char(p, &cp)) > 0 &&
                   sp_char_shown(cp)) {
            memcpy(piece, p, step);
            k = step;
        } else {
            /* A control, DEL, a byte that is no character, or a character
             * escaped whole: each byte as C writes it, \ooo. */
            step = step > 0 ? step : 1;
            for (size_t i = 0; i < step; i++)
                k += (size_t)snprintf(piece + k, sizeof piece - k, "\\%03o",
                                      p[i]);
        }
        if (n + k >= len)  /* no room for all of it and the NUL */
            break;
        memcpy(buf + n, piece, k);
        n += k;
        p += step;
    }
    buf[n] = '\0';
    return buf;
}

void sp_say(const char *fmt, ...)
{
    char *text = NULL, *shown = NULL;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&text, fmt, ap);
    va_end(ap);
    /* an escaped byte takes 4 at most (\ooo) */
    if (n >= 0)
        shown = malloc(4 * (size_t)n + 1);
    if (shown != NULL)
        fprintf(stderr, "scaleppm: %s\n",
                sp_show_name(text, shown, 4 * (size_t)n + 1));
    else
        fputs("scaleppm: no memory for a message\n", stderr);
    free(shown);
    if (n >= 0)
        free(text);
}

void sp_print_error(const char *path, sp_status st, const char *why)
{
    if (why[0] != '\0')
        sp_say("%s: %s: %s", path, sp_strerror(st), why);
    else
        sp_say("%s: %s", path, sp_strerror(st));
}
