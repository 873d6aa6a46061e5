/* write_lib.c: what the writer's suites (test_write_*.c) share: their
 * includes, an image written by its extension's format, and the check that
 * no temporary file was left. */
#include "write_lib.h"

/* write_ok: sp_write IMG to PATH in the format its extension says. */
void write_ok(const struct sp_image *img, const char *path)
{
    enum sp_outfmt fmt;
    char why[SP_WHY_MAX];
    sp_status st;

    ck_assert_int_eq(sp_outfmt_for(path, &fmt, NULL), SP_OK);
    st = sp_write(img, path, fmt, why);
    ck_assert_msg(st == SP_OK, "%s: %s (%s)", path, sp_strerror(st), why);
}

/* PNM output, byte for byte. */
/* No ".NAME.XXXXXX" temporary file, nor anything else, is left in DIR. */
void assert_no_temp(const char *dir)
{
    ck_assert_msg(fx_count_entries(dir, ".") == 0,
                  "a temporary file was left in %s", dir);
}

/* /dev/full: ENOSPC, no crash, for PNM and the stb formats, small and
 * larger than stdio's buffer. */
