/* msg.h: scaleppm's one-line messages on stderr. */
#ifndef SP_MSG_H
#define SP_MSG_H

#include <stddef.h>

#include "status.h"

/* sp_show_name: PATH as printed in a one-line message, in BUF (LEN
 * bytes): backslashes and control characters (a newline in a file name)
 * escaped as C does, so that the line stays one line. */
const char *sp_show_name(const char *path, char *buf, size_t len);

/* sp_print_error: "scaleppm: PATH: what ST means[: WHY]" on stderr. */
void sp_print_error(const char *path, sp_status st, const char *why);

#endif
