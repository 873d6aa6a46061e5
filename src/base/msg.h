/* msg.h: what keeps a one-line message one line: the escaping of names
 * and details (the printing is the command line's: say.h). */
#ifndef SP_MSG_H
#define SP_MSG_H

#include <stddef.h>

#include "status.h"

/* sp_utf8_char: the length of the valid UTF-8 sequence at P (2 to 4
 * bytes), with its code point in *CP; 0 where P does not start one (a
 * stray continuation byte, an overlong form, a surrogate, a code point
 * past U+10FFFF, a sequence cut short). */
size_t sp_utf8_char(const unsigned char *p, unsigned long *cp);

/* sp_char_shown: whether the code point CP may reach a terminal as it is:
 * not a C1 control (U+0080..U+009F: CSI, OSC, ... in their 8-bit forms,
 * which some terminals obey in UTF-8 too), nor a bidirectional override
 * or isolate, which reorders the rest of the line so that one line can
 * read as another. */
int sp_char_shown(unsigned long cp);

/* sp_show_name: TEXT (a file name, an argument, a detail that may hold
 * bytes of an input) as a one-line message may show it, in BUF (LEN
 * bytes, LEN > 0): every byte that could end the line or reach the
 * terminal as a command escaped as C writes it: a backslash, newline, tab
 * and carriage return as \\, \n, \t, \r; the other C0 controls, DEL,
 * bytes that are not UTF-8, C1 controls (U+0080..U+009F) and the
 * bidirectional overrides and isolates as \ooo, byte by byte.  Printable
 * UTF-8 (an e with an acute accent) stays as it is.  A TEXT too long for
 * BUF is cut between two characters.  Returns BUF. */
const char *sp_show_name(const char *text, char *buf, size_t len);

#endif
