/* The command line's one-line messages on stderr (say.h).  The library
 * prints nothing: its callers print what it reports. */
#include "say.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "msg.h"

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
