/* status.h: the one status type of scaleppm.
 *
 * 0 is success, a positive value is an errno passed through unchanged, and
 * a negative value is one of the project's codes, SP_E_*: the band of the
 * public header (scaleppm.h), far below any -errno.  The public API (api/)
 * hands an errno out negated, so that a host that returns -errno can
 * mix the two; sp_strerror() names every kind.  Library code never prints
 * and never exits: it returns an sp_status, and the program decides what
 * to say. */
#ifndef SP_STATUS_H
#define SP_STATUS_H

#include "scaleppm.h"

typedef int sp_status;

/* Room for the detail that may come with a status ("why"): a parser's
 * words, libnetpbm's, or the reason an output was refused.  It may hold
 * bytes of an input or a name as they are: show it through msg.h. */
#define SP_WHY_MAX 256

#endif
