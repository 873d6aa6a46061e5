/* header_lib.h: what the header suites (test_header_*.c) share: their
 * includes, and a header parsed (sp_header_parse) or loaded (sp_load) from
 * bytes or text written to a file. */
#ifndef SP_TEST_HEADER_LIB_H
#define SP_TEST_HEADER_LIB_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fixtures.h"
#include "header.h"
#include "input.h"

sp_status parse_bytes(const void *text, size_t len,
                      struct sp_header *hdr, char *why);
sp_status parse_text(const char *text, struct sp_header *hdr,
                     char *why);
sp_status load_bytes(const void *text, size_t len, enum sp_io io,
                     struct sp_load_info *info);
sp_status load_text(const char *text, enum sp_io io);

#endif
