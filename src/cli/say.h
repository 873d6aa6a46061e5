/* say.h: the command line's one-line messages on stderr (say.c), made
 * safe by msg.h's escaping.  Not part of the library, which prints
 * nothing: main.c, options.c and cli_batch.c use it. */
#ifndef SP_SAY_H
#define SP_SAY_H

#include "status.h"

/* sp_say: "scaleppm: " and the line FMT makes on stderr, all of it as
 * sp_show_name() shows a name (the arguments it echoes are a user's,
 * a script's or an input's).  It builds the line on the heap, not the
 * stack: a message must come out under any stack limit. */
void sp_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* sp_print_error: "scaleppm: PATH: what ST means[: WHY]" by sp_say. */
void sp_print_error(const char *path, sp_status st, const char *why);

#endif
