#include "msg.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

const char *sp_show_name(const char *path, char *buf, size_t len)
{
    static const char plain[] = "\\\n\t\r", named[] = "\\ntr";
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)path;
         *p != '\0' && n + 5 < len; p++) {
        const char *c = strchr(plain, *p);

        if (c != NULL)
            n += (size_t)snprintf(buf + n, len - n, "\\%c",
                                  named[c - plain]);
        else if (*p < 0x20 || *p == 0x7f)
            n += (size_t)snprintf(buf + n, len - n, "\\%03o", *p);
        else
            buf[n++] = (char)*p;
    }
    buf[n] = '\0';
    return buf;
}

void sp_print_error(const char *path, sp_status st, const char *why)
{
    char shown[PATH_MAX];

    sp_show_name(path, shown, sizeof shown);
    if (why[0] != '\0')
        fprintf(stderr, "scaleppm: %s: %s: %s\n", shown, sp_strerror(st),
                why);
    else
        fprintf(stderr, "scaleppm: %s: %s\n", shown, sp_strerror(st));
}
