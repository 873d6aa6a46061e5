/* The escaping that keeps a one-line message one line and keeps the
 * terminal's state out of the reach of names and inputs (msg.h). */
#include "msg.h"

#include <stdio.h>
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
